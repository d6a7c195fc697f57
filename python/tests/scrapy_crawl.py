"""One Scrapy crawl of the site `test_scrapy.py` serves, in a process of its
own (a Twisted reactor runs once per process).

Usage: python scrapy_crawl.py BASE_URL SETTINGS_JSON STATS_JSON
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

from scrapy import FormRequest, Request, Spider
from scrapy.crawler import CrawlerProcess
from scrapy.http import Response


class SiteSpider(Spider):  # type: ignore[misc]
    """Follows every link, and posts one form twice with the same body."""

    name = "site"

    def parse(self, response: Response) -> Iterator[Request]:
        for href in response.css("a::attr(href)").getall():
            yield response.follow(href, callback=self.parse)
        if response.url.endswith("/p1"):
            for body in ("q=1", "q=1", "q=2"):
                yield FormRequest(
                    response.urljoin("/form"),
                    formdata=dict([body.split("=")]),
                    callback=self.parse,
                )


def main() -> None:
    base, settings_json, stats_path = sys.argv[1:4]
    settings: dict[str, Any] = json.loads(settings_json)
    process = CrawlerProcess(settings)
    crawler = process.create_crawler(SiteSpider)
    process.crawl(crawler, start_urls=[base + "/"])
    process.start()
    stats = crawler.stats.get_stats()
    with open(stats_path, "w", encoding="utf-8") as f:
        json.dump({k: v for k, v in stats.items() if isinstance(v, (int, str))}, f)


if __name__ == "__main__":
    main()
