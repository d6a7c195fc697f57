"""One worker of a crawl shared through Redis (redis_crawl.py starts
several): a Scrapy process under scrapy-redis's scheduler that follows every
link of the site and ends once the shared queue stayed empty for
`IDLE_CLOSE_SECONDS` (setting, default 2) while it had nothing in flight.

Usage: python scrapy_redis_crawl.py BASE_URL SETTINGS_JSON STATS_JSON
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from typing import Any

from scrapy import Request, Spider, signals
from scrapy.core.engine import ExecutionEngine
from scrapy.crawler import CrawlerProcess
from scrapy.exceptions import DontCloseSpider
from scrapy.http import Response

# An idle engine asks the scheduler for work at each heartbeat (5 s by
# default): a worker would wait that long for what another worker queued.
ExecutionEngine._SLOT_HEARTBEAT_INTERVAL = 0.1


class SiteSpider(Spider):  # type: ignore[misc]
    """Follows every link; the start URL is filtered like any other, so the
    workers fetch the home page once between them."""

    name = "site"

    def __init__(self, base: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.base = base
        self.last_busy = time.monotonic()

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> SiteSpider:
        spider: SiteSpider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.opened, signal=signals.spider_opened)
        crawler.signals.connect(spider.idle, signal=signals.spider_idle)
        return spider

    def opened(self) -> None:
        # Starting takes seconds on a loaded machine: the idle time counts from here.
        self.last_busy = time.monotonic()

    async def start(self) -> Any:
        yield Request(self.base + "/", callback=self.parse)

    def start_requests(self) -> Iterator[Request]:
        yield Request(self.base + "/", callback=self.parse)

    def parse(self, response: Response) -> Iterator[Request]:
        self.last_busy = time.monotonic()
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, callback=self.parse)

    def idle(self) -> None:
        scheduler = self.crawler.engine._slot.scheduler
        if scheduler.has_pending_requests():
            self.last_busy = time.monotonic()
        wait = self.settings.getfloat("IDLE_CLOSE_SECONDS", 2.0)
        if time.monotonic() - self.last_busy < wait:
            raise DontCloseSpider


def main() -> None:
    base, settings_json, stats_path = sys.argv[1:4]
    settings: dict[str, Any] = json.loads(settings_json)
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(SiteSpider)
    process.crawl(crawler, base=base)
    process.start()
    stats = crawler.stats.get_stats()
    with open(stats_path, "w", encoding="utf-8") as f:
        json.dump({k: v for k, v in stats.items() if isinstance(v, (int, float, str))}, f)


if __name__ == "__main__":
    main()
