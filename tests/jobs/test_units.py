"""`vq jobs systemd|cron`: units systemd accepts, schedules that mean the interval, a cron
line that really builds."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from tests.conftest import write_config
from vq.core.errors import VqError
from vq.core.settings import load_settings

ANALYZE = shutil.which("systemd-analyze")


def parse_unit(text: str) -> dict[str, dict[str, list[str]]]:
    """Sections → key → values (keys such as Environment= repeat)."""
    sections: dict[str, dict[str, list[str]]] = {}
    current = None
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith("["):
            assert line.endswith("]"), line
            current = sections.setdefault(line[1:-1], {})
            continue
        key, sep, value = line.partition("=")
        assert sep and current is not None and key == key.strip(), line
        current.setdefault(key, []).append(value)
    return sections


def unit_argv(value: str) -> list[str]:
    """An ExecStart/Environment value back to words, undoing systemd's % and $ escapes."""
    return [w.replace("%%", "%").replace("$$", "$") for w in shlex.split(value)]


def analyze_works() -> bool:
    if not ANALYZE:
        return False
    probe = subprocess.run([ANALYZE, "calendar", "daily"], capture_output=True)
    return probe.returncode == 0


@pytest.fixture
def odd_settings(tmp_path, vault):
    """A config whose path needs quoting in both unit files and crontabs."""
    folder = tmp_path / "my config %d $HOME"
    folder.mkdir()
    cfg = write_config(folder / "vq.yaml", {"index_dir": str(tmp_path / "index"),
                                            "vaults": {"notes": {"path": str(vault)}}})
    return load_settings(str(cfg))


def test_systemd_units_parse_and_verify(tmp_path, odd_settings):
    from vq.jobs.units import systemd_units, unit_names, vq_command

    names = unit_names(odd_settings)
    environ = {"VQ_DEVICE": "cpu", "XDG_DATA_HOME": "/srv/vq data", "VQ_CONFIG": "/elsewhere",
               "HOME": "/root", "PATH": "/bin"}
    units = {u.name: u.text for u in systemd_units(odd_settings, user=False, interval="10min",
                                                   daemon_cron="*/10 * * * *",
                                                   environ=environ)}
    assert set(units) == {names.build, names.timer, names.daemon}
    build, timer, daemon = (parse_unit(units[n]) for n in
                            (names.build, names.timer, names.daemon))
    config = str(odd_settings.config_file)
    assert build["Service"]["Type"] == ["oneshot"]
    assert unit_argv(build["Service"]["ExecStart"][0]) == [*vq_command(), "--config", config,
                                                           "build"]
    env = dict(unit_argv(e)[0].split("=", 1) for e in build["Service"]["Environment"])
    assert env == {"HF_HUB_OFFLINE": "1", "VQ_DEVICE": "cpu", "XDG_DATA_HOME": "/srv/vq data"}
    assert timer["Timer"]["Persistent"] == ["true"]
    assert timer["Timer"]["RandomizedDelaySec"] == [f"{odd_settings.schedule.jitter_seconds}s"]
    assert timer["Install"]["WantedBy"] == ["timers.target"]
    assert daemon["Service"]["Type"] == ["simple"]
    assert daemon["Service"]["Restart"] == ["on-failure"]
    assert unit_argv(daemon["Service"]["ExecStart"][0])[-3:] == ["schedule", "--cron",
                                                                 "*/10 * * * *"]
    assert daemon["Unit"]["Conflicts"] == [names.timer]
    assert timer["Timer"]["Unit"] == [names.build]
    if not analyze_works():
        pytest.skip("systemd-analyze is not usable here: structural checks only")
    for name, text in units.items():
        (tmp_path / name).write_text(text)
    verify = subprocess.run([ANALYZE, "verify", *(str(tmp_path / n) for n in units)],
                            capture_output=True, text=True)
    assert verify.returncode == 0 and verify.stderr.strip() == "", verify.stderr


@pytest.mark.parametrize(("interval", "step"), [
    ("30s", 30), ("5min", 300), ("1min", 60), ("15m", 900), ("1h", 3600), ("6h", 21600),
    ("1d", 86400),
])
def test_intervals_fire_as_often_as_they_say(interval, step):
    """The systemd calendar (per systemd-analyze) and the cron form (per APScheduler) both
    fire every ``step`` seconds."""
    from vq.jobs.cron import cron_trigger
    from vq.jobs.timespec import interval_to_cron, interval_to_oncalendar

    if step >= 60:
        trigger = cron_trigger(interval_to_cron(interval), timezone="UTC")
        now = datetime.fromisoformat("2026-03-01T00:00:30+00:00")
        fires = []
        for _ in range(3):
            now = trigger.get_next_fire_time(None, now)
            fires.append(now)
            now += timedelta(seconds=1)
        assert {(b - a).total_seconds() for a, b in zip(fires, fires[1:], strict=False)} \
            == {step}
    if not analyze_works():
        pytest.skip("systemd-analyze is not usable here")
    out = subprocess.run([ANALYZE, "calendar", "--iterations=3",
                          interval_to_oncalendar(interval)],
                         capture_output=True, text=True, env={"TZ": "UTC"})
    assert out.returncode == 0, out.stderr
    stamps = [datetime.strptime(" ".join(line.split(": ", 1)[1].split()[1:3]),
                                "%Y-%m-%d %H:%M:%S")
              for line in out.stdout.splitlines()
              if line.strip().startswith(("Next elapse", "Iter. #"))]
    assert len(stamps) == 3
    assert {(b - a).total_seconds() for a, b in zip(stamps, stamps[1:], strict=False)} \
        == {step}


@pytest.mark.parametrize("interval", ["7min", "45s", "5h", "2d", "soon", "0s"])
def test_intervals_that_do_not_divide_their_unit_are_refused(interval):
    from vq.jobs.timespec import interval_to_oncalendar

    with pytest.raises(VqError):
        interval_to_oncalendar(interval)


def test_systemd_write_user_puts_units_where_systemctl_user_looks(cli, config_file, tmp_path):
    result = cli("--config", config_file, "jobs", "systemd", "--user", "--write")
    assert result.exit_code == 0, result.output
    from vq.jobs.units import unit_names

    names = unit_names(load_settings(str(config_file)))
    folder = tmp_path / "xdg-config" / "systemd" / "user"   # XDG_CONFIG_HOME from conftest
    assert sorted(p.name for p in folder.iterdir()) == sorted([names.build, names.timer,
                                                               names.daemon])
    daemon = parse_unit((folder / names.daemon).read_text())
    assert daemon["Install"]["WantedBy"] == ["default.target"]
    assert "User" not in daemon["Service"]
    # without --interval the daemon follows schedule.cron from the config at each tick
    assert unit_argv(daemon["Service"]["ExecStart"][0])[-1] == "schedule"
    assert f"systemctl --user enable --now {names.timer}" in result.output


def two_projects(tmp_path, vault):
    out = []
    for name in ("alpha", "beta"):
        (tmp_path / name).mkdir()
        out.append(write_config(tmp_path / name / ".vq.yaml", {
            "index_dir": str(tmp_path / name / "index"),
            "vaults": {"notes": {"path": str(vault)}}}))
    return out


def test_two_projects_get_their_own_units_side_by_side(cli, tmp_path, vault):
    """The second project's `--write` adds its units; the first's still run the first."""
    first, second = two_projects(tmp_path, vault)
    for config in (first, second):
        result = cli("--config", config, "jobs", "systemd", "--user", "--write")
        assert result.exit_code == 0, result.output
    folder = tmp_path / "xdg-config" / "systemd" / "user"
    assert len(list(folder.iterdir())) == 6
    for config in (first, second):
        from vq.jobs.units import unit_names

        names = unit_names(load_settings(str(config)))
        assert names.id.startswith(config.parent.name + "-")
        argv = unit_argv(parse_unit((folder / names.build).read_text())
                         ["Service"]["ExecStart"][0])
        assert argv[argv.index("--config") + 1] == str(config)
    again = cli("--config", first, "jobs", "systemd", "--user", "--write")
    assert again.exit_code == 0, again.output  # rewriting one's own units is fine


def test_units_of_another_project_or_by_hand_are_not_replaced(tmp_path, vault):
    from vq.jobs.units import systemd_units, unit_names, write_units

    first, second = two_projects(tmp_path, vault)
    folder = tmp_path / "units"
    one = systemd_units(load_settings(str(first)))
    write_units(one, folder)
    # another project whose units land on the same names (a copied config, an old vq)
    theirs = [type(u)(u.name, u.text.replace(str(first), str(second))) for u in one]
    with pytest.raises(VqError, match="runs .*alpha.*not replacing") as exc:
        write_units(theirs, folder)
    assert "--force" in exc.value.fix
    assert str(first) in (folder / unit_names(load_settings(str(first))).build).read_text()
    (folder / one[0].name).write_text("[Unit]\nDescription=mine\n")
    with pytest.raises(VqError, match="not written by"):
        write_units(one, folder)
    write_units(one, folder, force=True)
    assert "# vq-config: " + str(first) in (folder / one[0].name).read_text()


@pytest.mark.model
@pytest.mark.slow
def test_cron_line_runs_a_real_build_with_crons_bare_environment(cli, built, tmp_path):
    """Run the printed line the way cron would: /bin/sh, PATH=/usr/bin:/bin, nothing else."""
    log = tmp_path / "logs" / "build.log"
    result = cli("--config", built.config_file, "jobs", "cron", "--log", log, "--json")
    assert result.exit_code == 0, result.output
    line = json.loads(result.stdout)["line"]
    fields = line.split(" ", 5)
    assert " ".join(fields[:5]) == built.schedule.cron and "flock" not in line
    command = fields[5].replace("\\%", "%")          # cron's own unescaping
    done = subprocess.run(["/bin/sh", "-c", command], env={"PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=300, cwd="/")
    assert done.returncode == 0 and done.stdout == done.stderr == ""
    text = log.read_text()
    assert "ok: 4 files, 0 new, 0 changed" in text, text


def test_cron_refuses_a_seconds_field(cli, config_file):
    result = cli("--config", config_file, "jobs", "cron", "--cron", "*/5 * * * * *")
    assert result.exit_code == 2 and "five fields" in result.output


def test_ci_workflow_example_caches_builds_waits_and_checks():
    """examples/github-actions.yml: restore the cache, build --wait, check, save the cache."""
    import yaml

    repo = Path(__file__).resolve().parents[2]
    flow = yaml.safe_load((repo / "examples" / "github-actions.yml").read_text())
    job = next(iter(flow["jobs"].values()))
    steps = job["steps"]
    index_dir = flow.get("env", {}).get("VQ_INDEX_DIR") or job["env"]["VQ_INDEX_DIR"]
    uses = [s.get("uses", "") for s in steps]
    restore = next(i for i, u in enumerate(uses) if u.startswith("actions/cache/restore@"))
    save = next(i for i, u in enumerate(uses) if u.startswith("actions/cache/save@"))
    runs = [(i, s["run"]) for i, s in enumerate(steps) if "run" in s]
    build = next(i for i, r in runs if "vq build --wait 600" in r)
    check = next(i for i, r in runs if "vq status --check" in r)
    assert restore < build < check < save
    for i in (restore, save):
        assert steps[i]["with"]["path"] == index_dir
        assert "hashFiles(" in steps[i]["with"]["key"]
    assert steps[restore]["with"]["restore-keys"]


def test_doctor_names_each_units_config_and_flags_fixed_legacy_names(cli, config_file,
                                                                      tmp_path):
    from vq.jobs.units import unit_names

    assert cli("--config", config_file, "jobs", "systemd", "--user", "--write").exit_code == 0
    folder = tmp_path / "xdg-config" / "systemd" / "user"
    (folder / "vq-build.timer").write_text("[Timer]\nOnCalendar=*:0/5\n")  # an older vq's
    result = cli("--config", config_file, "doctor", "--no-model")
    timer = unit_names(load_settings(str(config_file))).timer
    lines = result.stdout.splitlines()
    ours = next(ln for ln in lines if ln.endswith(f"{timer} (runs {config_file})"))
    assert ours.startswith("✓ schedule")
    legacy = next(i for i, ln in enumerate(lines) if "vq-build.timer: a fixed name" in ln)
    assert lines[legacy].startswith("⚠ schedule")
    assert "systemctl --user disable --now vq-build.timer" in lines[legacy + 1]
