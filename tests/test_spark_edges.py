"""`--engine spark` where no Spark is needed to say no (issue 30): without Java one line saying how to
install it; every refusal that needs no Spark (the options, the partitioned mode's locality analysis,
the checkpoint's key, --publish) comes before Spark starts. Each run here has no Java at all (PATH and
JAVA_HOME point nowhere), so a refusal other than the Java line proves it came first; no JVM starts."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
QUERY = ROOT / "queries" / "csrbench" / "max-temperature.rq"
STREAM = ROOT / "tests" / "data" / "csrbench" / "stream-6s.tnt"
ARGS = ["query", str(QUERY), "--stream", f"http://ex.org/csrbench={STREAM}", "--engine", "spark", "-q"]
INSTALL = "apt-get install openjdk-17-jre-headless"


def without_java(tmp_path, *args, java_home: str | None = None) -> subprocess.CompletedProcess:
    """`rsp-plugin ARGS` with no java on PATH (an empty folder) and JAVA_HOME unset or naming `java_home`."""
    nowhere = tmp_path / "bin"
    nowhere.mkdir(exist_ok=True)
    env = {key: value for key, value in os.environ.items() if key not in ("JAVA_HOME", "SPARK_HOME")}
    env["PATH"] = str(nowhere)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    if java_home is not None:
        env["JAVA_HOME"] = java_home
    return subprocess.run([sys.executable, "-m", "rsp_plugin.cli", *args], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=120)


def test_without_java_the_spark_engine_is_one_line_saying_how_to_install_it(tmp_path):
    done = without_java(tmp_path, *ARGS)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == ("rsp-plugin: Spark runs on Java, and there is none here (no java on PATH, JAVA_HOME not "
                           f"set): install a Java runtime, 17 or later, e.g. {INSTALL}\n")


def test_a_java_home_without_java_is_said_so_in_one_line(tmp_path):
    done = without_java(tmp_path, *ARGS, java_home=str(tmp_path / "jdk"))
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"rsp-plugin: Spark runs on Java, and JAVA_HOME names no Java ({tmp_path}/jdk/bin/java")
    assert INSTALL in done.stderr


def test_a_query_that_is_not_key_local_is_refused_before_spark_starts(tmp_path):
    """The locality analysis needs no Spark session: --partition-by's refusal comes first (it came after
    33 s of Spark's start-up)."""
    done = without_java(tmp_path, *ARGS, "--partition-by", "sensor")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (f"rsp-plugin: {QUERY}:1:1: PARTITION BY ?sensor: the query is not key-local: "
                           "LIMIT / OFFSET works across keys\n")


@pytest.mark.parametrize("more, said", [
    (["--mode", "distributed", "--partition-by", "sensor"],
     "--partition-by runs partitioned mode; --mode distributed is another: choose one"),
    (["--checkpoint-key", "key.txt"], "--checkpoint-key authenticates the states of --checkpoint DIR: give both"),
    (["--publish", "http://example.org/"], "--publish http://example.org/: expected mqtt://HOST:PORT/TOPIC "
                                           "(or mqtts:// for TLS)"),
    (["--format", "csv"], "--format csv is written by --engine local; --engine spark writes JSON lines: json or "
                          "sparql-jsonl"),
])
def test_option_combinations_are_refused_before_spark_starts(tmp_path, more, said):
    done = without_java(tmp_path, *ARGS, *more)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"rsp-plugin: {said}\n")


def test_a_checkpoint_key_that_others_may_read_is_refused_before_spark_starts(tmp_path):
    key = tmp_path / "key.txt"
    key.write_text("a key of the checkpoint, 16 bytes or more\n")
    key.chmod(0o644)
    done = without_java(tmp_path, *ARGS, "--checkpoint", str(tmp_path / "chk"), "--checkpoint-key", str(key))
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == (f"rsp-plugin: {key}: the checkpoint key may be read or written by group or others "
                           f"(mode 644); make it private: chmod 600 {key}\n")


def test_the_spark_log_level_is_an_option_of_the_spark_engine(tmp_path):
    local = ["query", str(QUERY), "--stream", f"http://ex.org/csrbench={STREAM}", "--spark-log-level", "warn"]
    done = without_java(tmp_path, *local)
    assert (done.returncode, done.stderr) == (2, "rsp-plugin: --spark-log-level is read by --engine spark\n")
    done = without_java(tmp_path, *ARGS, "--spark-log-level", "loud")
    assert done.returncode == 2 and "--spark-log-level: invalid choice: 'LOUD'" in done.stderr


def test_the_command_line_offers_sparks_log_levels():
    from rsp_plugin.cli.command_line import SPARK_LOG_LEVELS
    from rsp_plugin.spark.session import LOG_LEVELS

    assert SPARK_LOG_LEVELS == LOG_LEVELS
