"""What `gpuradar run` wires together, checked in-process on a real database (SQLite file, or PostgreSQL with
TEST_DATABASE_URL) against the provider stand-in: the scrapers run only on the replica holding the lease and move
to another when it stops; /metrics reports real scrapes, the lease and the outbox read from the database; /healthz
says who leads. The settings module stays light for the CLI."""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import select, update

from core.polls import PollResult, PollStatus
from gpuradar.app import App
from gpuradar.leadership import LeadershipLost, fenced
from gpuradar.metrics import Metrics
from gpuradar.settings import Settings
from storage.alert_tables import AlertEventRow
from storage.db import make_engine, make_sessionmaker
from storage.ingest import record_poll
from storage.lease import LeaderLease
from storage.lease_tables import LeaseRow
from storage.offer_tables import ScrapeRun
from storage.outbox import OutboxWriter
from testkit.fake_telegram import FakeTelegram
from testkit.provider_server import RUNPOD_PATH, ProviderServer
from testkit.waiting import unlocked, until
from tests.storage.test_outbox_helpers import RATES, T0, add_sub, add_user, enqueue, event, offer

ROOT = Path(__file__).resolve().parents[2]




def replica(tg: FakeTelegram, server: ProviderServer, url: str) -> App:
    others = {name: {"enabled": False} for name in ("selectel", "hostkey", "vastai", "cloudrift", "vultr")}
    providers = server.providers_settings(runpod={"interval": 1, "jitter": 0}, **others)
    settings = Settings(database_url=url, bot_token=tg.token, telegram_api_url=tg.base_url, providers=providers,
                        fx_url=f"{server.base_url}/no-rates-here", web={"host": "127.0.0.1", "port": 0},
                        lease={"ttl": 4.0})  # short for the takeover, long enough not to lapse under load
    return App(settings, serve_web=True, polling_timeout=1, metrics=Metrics(process=False))


async def metrics_of(app: App) -> dict[tuple[str, tuple], float]:
    assert app.web is not None
    async with httpx.AsyncClient() as client:
        text = (await client.get(f"{app.web.url}/metrics")).text
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}


async def healthz(app: App) -> dict:
    assert app.web is not None
    async with httpx.AsyncClient() as client:
        response = await client.get(f"{app.web.url}/healthz")
    assert response.status_code == 200
    return response.json()


def polls(server: ProviderServer) -> int:
    return len(server.requests_to(RUNPOD_PATH))


async def test_one_replica_scrapes_and_the_other_takes_over_when_it_stops(
        provider_server: ProviderServer, migrated_database_url: str) -> None:
    leader_key = ("gpuradar_leader", (("lease", "scrapers"),))
    async with FakeTelegram() as tg:
        first = replica(tg, provider_server, migrated_database_url)
        await first.start()
        second = replica(tg, provider_server, migrated_database_url)
        await second.start()
        try:
            assert first.leadership is not None and second.leadership is not None
            await until(lambda: first.leadership.leading)  # the first to campaign wins
            await until(lambda: polls(provider_server) >= 2)
            assert second.leadership.leading is False and second.leadership.elections == 0
            m1, m2 = await metrics_of(first), await metrics_of(second)
            assert m1[leader_key] == 1 and m2.get(leader_key, 0) == 0
            assert m1[("gpuradar_scrapes_total", (("provider", "runpod"), ("status", "ok")))] >= 1
            assert m1[("gpuradar_scrape_offers", (("provider", "runpod"),))] > 0
            assert m1[("gpuradar_offers_in_stock", (("provider", "runpod"),))] > 0  # read from the database
            assert not any(name == "gpuradar_scrapes_total" for name, _ in m2)  # the follower never polled
            assert (await healthz(first))["scraper_leader"] is True
            assert (await healthz(second))["scraper_leader"] is False

            # the outbox gauges come from the shared database, so the follower reports them too
            assert first.sessionmaker is not None
            sm = first.sessionmaker
            await unlocked(lambda: add_user(sm, 77))
            await unlocked(lambda: add_sub(sm, 77))
            await unlocked(lambda: enqueue(sm, OutboxWriter(), [event(offer(sku="h100-gauge"))]))
            m2 = await metrics_of(second)
            assert m2[("gpuradar_alerts_pending", ())] == 1
            assert m2[("gpuradar_outbox_oldest_pending_age_seconds", ())] > 0

            # the leader stops (releasing the lease): the follower takes over and polls
            term = first.leadership.lease.term
            await first.stop()
            before = polls(provider_server)
            await until(lambda: second.leadership.leading)
            await until(lambda: polls(provider_server) > before)
            assert second.leadership.lease.term == term + 1
            assert (await metrics_of(second))[leader_key] == 1
            state = await unlocked(LeaderLease(second.sessionmaker, "scrapers").state)
            assert state is not None and state.holder == second.leadership.lease.holder
        finally:
            await first.stop()
            await second.stop()


def test_settings_import_stays_light() -> None:
    """Every CLI command imports the settings; the web server and the bot framework must not come with them."""
    code = "import sys, gpuradar.settings; print(sorted(m for m in ('aiohttp', 'aiogram') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "[]"


def poll_of(offers: list, minute: int) -> PollResult:
    at = T0 + timedelta(minutes=minute)
    return PollResult(provider="runpod", status=PollStatus.OK, offers=offers, started_at=at,
                      finished_at=at + timedelta(seconds=1))


async def test_an_ex_leaders_poll_queues_no_alert(migrated_database_url: str) -> None:
    """Fencing: a poll finishing after its replica lost the lease is rolled back whole (events and outbox), so
    the same change recorded by the new leader cannot alert twice."""
    engine = make_engine(migrated_database_url)
    sm = make_sessionmaker(engine)
    try:
        await add_user(sm, 5)
        await add_sub(sm, 5)  # H100
        old, new = LeaderLease(sm, "scrapers", holder="old"), LeaderLease(sm, "scrapers", holder="new")
        assert await old.try_acquire()
        term = old.term
        assert term is not None
        hook = fenced(OutboxWriter(), old, term)
        await record_poll(sm, poll_of([offer(sku="a100", gpu="a100-80gb")], 0), rates=RATES, on_events=hook)
        # the old leader stalls; its lease lapses and the new one takes over
        async with sm() as s, s.begin():
            await s.execute(update(LeaseRow).values(expires_at=0.0))
        assert await new.try_acquire()
        change = poll_of([offer(sku="a100", gpu="a100-80gb"), offer(sku="h100")], 1)
        with pytest.raises(LeadershipLost):
            await record_poll(sm, change, rates=RATES, on_events=hook)
        async with sm() as s:
            assert (await s.scalars(select(AlertEventRow.id))).all() == []
            assert len((await s.scalars(select(ScrapeRun.id))).all()) == 1  # the late poll left nothing
        # the same poll under the current leader's term does queue the alert
        await record_poll(sm, change, rates=RATES, on_events=fenced(OutboxWriter(), new, new.term or 0))
        async with sm() as s:
            assert (await s.scalars(select(AlertEventRow.offer_key))).all() == [offer(sku="h100").key]
    finally:
        await engine.dispose()


def test_an_alert_hook_the_ingest_process_cannot_run_is_refused(migrated_database_url: str) -> None:
    """Polls are recorded in the ingest child, which writes the alert queue with its own OutboxWriter: any other
    hook would silently never run there, so the App refuses it when built."""
    from gpuradar.app import AlertHook

    async def hook(session, events) -> None:  # what embedding code might hand over
        pass

    with pytest.raises(TypeError, match="OutboxWriter"):
        App(Settings(database_url=migrated_database_url, bot_token="123:x"), alerts=AlertHook(on_events=hook))  # type: ignore[arg-type]
    App(Settings(database_url=migrated_database_url, bot_token="123:x"), alerts=AlertHook(on_events=OutboxWriter()))
