"""The Redis fixtures themselves: a node and a three-master cluster answer
on loopback, cover every slot, and are emptied between tests."""

from __future__ import annotations

import redis
from redis.cluster import RedisCluster as ClusterClient
from redis_servers import RedisCluster, RedisServer


def test_the_node_answers_on_loopback(redis_node: RedisServer, redis_url: str) -> None:
    assert redis_url.startswith("redis://127.0.0.1:")
    client = redis.Redis.from_url(redis_url)
    assert client.ping()
    client.set("left-over", 1)
    assert client.config_get("bind")["bind"] == "127.0.0.1"


def test_the_node_is_emptied_between_tests(redis_url: str) -> None:
    assert redis.Redis.from_url(redis_url).dbsize() == 0


def test_the_cluster_has_three_masters_over_every_slot(redis_cluster: RedisCluster) -> None:
    client = ClusterClient(host="127.0.0.1", port=redis_cluster.ports[0])
    try:
        masters = [n for n in client.get_nodes() if n.server_type == "primary"]
        assert sorted(n.port for n in masters) == sorted(redis_cluster.ports)
        info = client.cluster_info()
        assert info["cluster_state"] == "ok" and int(info["cluster_slots_assigned"]) == 16384
        # Keys land on every node.
        for i in range(60):
            client.set(f"k{i}", i)
        assert all(n.command("DBSIZE") for n in redis_cluster.nodes)
    finally:
        client.close()


def test_the_cluster_is_emptied_between_tests(redis_cluster: RedisCluster) -> None:
    assert all(n.command("DBSIZE") == 0 for n in redis_cluster.nodes)
