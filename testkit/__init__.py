"""What the tests and the benches both use, so neither imports the other: real parts on loopback and the public
measurements judged one way.

- `fake_telegram`     the stand-in Bot API server (aiohttp on 127.0.0.1) the bot is driven through;
- `provider_server`   the providers' APIs served from `tests/fixtures/providers` at their live paths (also a pytest
                      plugin: the `provider_server` fixture);
- `waiting`           `until(condition)`: wait for what a test or bench expects, never for a fixed time;
- `measured_points`   the public peak-memory measurements (`bench/data/measured_*.json`) as workloads, and how
                      each kind of point is judged (the accuracy tests and `bench/accuracy_table.py`);
- `throughput_points` the public throughputs (`bench/data/throughput_points.json`) for the speed model
                      (`tests/core/test_speed.py` and `bench/speed_table.py`).

What only the tests use stays in `tests/support/` (the README transcript, the Hub stand-in, the migration killer);
the benches stay scripts in `bench/`. Not installed with the product (`pyproject.toml` packages) nor in the image.
"""
