"""Test helpers only the tests use (the README transcript, the Hub stand-in, the migration killer). What the
benches use too (the stand-in Telegram and provider servers, `until`) lives in `testkit/`."""
