"""The Python module with its records on a PostgreSQL server (issue 41): db= takes the server's URI
as the command line's --db does. The suite's own server (CTest's fixture `postgres`) holds a
database of this test's own."""
import os
import pathlib
import subprocess

import pytest

import optune

QUICK = dict(target="cpu", repeat=2, min_repeat_ms=1.0, batch_size=4, remeasure=0)


@pytest.fixture
def server_database():
    folder = os.environ.get("OPTUNE_TEST_POSTGRES_DIR")
    if not folder:
        pytest.skip("no PostgreSQL test server: run through ctest (fixture postgres)")
    server = (pathlib.Path(folder) / "uri").read_text().strip()
    os.environ["PGPASSFILE"] = str(pathlib.Path(folder) / "pgpass")
    name = f"optune_python_{os.getpid()}"
    subprocess.run(["psql", "-q", f"{server}/postgres", "-c", f"CREATE DATABASE {name}"], check=True)
    yield f"{server}/{name}"
    subprocess.run(["psql", "-q", f"{server}/postgres", "-c", f"DROP DATABASE {name} WITH (FORCE)"], check=True)


def test_tune_query_and_pick_with_the_records_on_a_server(server_database):
    result = optune.tune(op="gemm", shape="48,40,36", trials=4, db=server_database, tuner="random", **QUICK)
    assert result["trials"] == 4
    history = optune.query(db=server_database, history=True)
    assert len(history) == 5  # the default and four candidates
    assert {r["run_id"] for r in history} == {result["run_id"]}
    top = optune.query(db=server_database, op="gemm", shape=(48, 40, 36))
    assert top[0]["config"] == result["best"]["config"]
    assert optune.pick(op="gemm", shape=(48, 40, 36), db=server_database)["config"] == result["best"]["config"]


def test_a_uri_holding_a_password_is_refused_without_repeating_it(server_database):
    with_password = server_database.replace("optune@", "optune:hunter2word@")
    with pytest.raises(ValueError) as refused:
        optune.query(db=with_password)
    assert "holds a password" in str(refused.value)
    assert "hunter2word" not in str(refused.value)
