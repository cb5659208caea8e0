#!/usr/bin/env python3
"""Runs the benchmarks and writes BENCHMARKS.md (one table per performance target, with the
anchor measured in the same run and the verdict) and its plots under docs/bench/.

Usage: python3 scripts/bench_report.py [--quick] [--no-run] [--only RUN[,RUN...]]
                                       [--before OLD.md --label TEXT]

  --quick   KEEPSAKE_BENCH_QUICK=1 and short criterion runs (120 frames per frame-time run)
  --no-run  only rebuild the report and the plots from the logs and criterion data at hand
  --only    run only these (comma-separated), then rebuild the whole report; every table says
            when its figures were measured, so figures of earlier runs still at hand stay:
              frame_time     the game-like frame bench (frame times, F9, load at start, held
                             rewind) and its per-frame traces for the plots
              capture_load   shapes bench: capture and load against DynamicWorld at 1k/10k/100k,
                             the main thread's and the pool's part of a save at 100k
              load_at_start  shapes bench: load at start against DynamicWorld at 100k
              rewind         the rewind bench (step, point, memory) at 10k
              store_targets  store bench: 1 MB save/load against a bare write/read, sealed, listing
              shapes, snapshot, layouts, format, store, migration, memory: a whole bench
            Without --only: frame_time, capture_load, load_at_start, rewind, store_targets.
  --self-test  build a report from a few sample lines in a temporary folder and check its
            verdicts (no build, no run; CI runs it)
  --before  an earlier BENCHMARKS.md (for example `git show REV:BENCHMARKS.md > old.md`): the
            report ends with every figure of a table that moved by more than NOISE against it;
            --label names the earlier run

Data: criterion's means from <target>/criterion/**/new/estimates.json, the benches' printed
lines (p50 / p99, sizes, frame times) from <target>/bench-logs/, the per-frame traces from
<target>/bench-traces/ (<target> is $CARGO_TARGET_DIR, else ./target). Nothing in the report is
typed by hand but the targets (DESIGN.md) and the short notes on why a missed target is missed.

Plots need matplotlib, which is not in the standard library. Without it the report is still
written and says the plots were not redrawn. To get it (outside the repository):
    python3 -m venv "$CARGO_TARGET_DIR/../bench-venv"
    "$CARGO_TARGET_DIR/../bench-venv/bin/pip" install matplotlib
    "$CARGO_TARGET_DIR/../bench-venv/bin/python" scripts/bench_report.py --no-run
"""

import datetime
import json
import os
import platform
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
# KEEPSAKE_BENCH_LOGS keeps one branch's logs apart from others sharing the target folder.
LOGS = Path(os.environ.get("KEEPSAKE_BENCH_LOGS", TARGET / "bench-logs"))
CRITERION = TARGET / "criterion"
# Per-frame CSVs the frame_time bench writes for the plots (KEEPSAKE_BENCH_TRACES).
TRACES = TARGET / "bench-traces"
# The plots, committed beside the report.
PLOTS = ROOT / "docs" / "bench"
BUDGET_MS = 1000 / 60


def older_rust_flags():
    """`--ignore-rust-version` when this rustc is older than the crate's declared rust-version
    (Bevy 0.20 declares 1.97.1 and builds on 1.95; see `.ci/run`), else nothing."""
    declared = re.search(r'^rust-version = "([^"]+)"', (ROOT / "Cargo.toml").read_text(), re.M)
    have = re.search(r"rustc (\d+(?:\.\d+)*)", subprocess.run(
        ["rustc", "--version"], capture_output=True, text=True, check=True).stdout)
    version = lambda text: tuple(int(part) for part in text.split("."))
    if declared and have and version(have.group(1)) < version(declared.group(1)):
        return ["--ignore-rust-version"]
    return []


# What each run name runs: (bench, log name, environment, criterion arguments). A run with its
# own criterion arguments keeps them under --quick; the others get short ones.
TIMING = ["--warm-up-time", "1", "--measurement-time", "3"]
RUNS = {
    "frame_time": ("frame_time", "frame_time", {"KEEPSAKE_BENCH_TRACES": str(TRACES)}, []),
    # The shapes bench's targets without its parts no target reads: full capture and load
    # against DynamicWorld at every count (and the plot), the main thread's and the pool's part
    # of a save at 100k.
    "capture_load": ("shapes", "shapes_capture_load", {"KEEPSAKE_BENCH_COUNTS": "1000,10000,100000"},
                     ["/(capture|decode_apply|dw_postcard_save|dw_postcard_load)/"
                      "|/(main_10pct|pool_1pct|pool_full)/100000", *TIMING]),
    "load_at_start": ("shapes", "shapes_load_at_start", {"KEEPSAKE_BENCH_COUNTS": "100000"},
                      ["apply_at_start|dw_apply", *TIMING]),
    "shapes": ("shapes", "shapes", {}, []),
    "rewind": ("rewind", "rewind", {}, []),
    # The store's targets alone: the 1 MB save and load against the bare write and read, sealed
    # against unsealed, 16 slots listed.
    "store_targets": ("store", "store_targets", {},
                      ["save_load/.*/1MB|list_16_slots", *TIMING]),
    **{bench: (bench, bench, {}, []) for bench in
       ("snapshot", "layouts", "format", "store", "migration", "memory")},
}
# What a run without --only runs: what the report reads (the cloud bench needs the `cloud`
# feature, and the other benches have no target in the report: run them by hand).
FULL_RUN = ["frame_time", "capture_load", "load_at_start", "rewind", "store_targets"]


def run_benches(quick, names):
    """Runs each named run under `cargo bench`, its output into its own log. A bench that fails
    is reported and the others still run; returns the names that failed."""
    LOGS.mkdir(parents=True, exist_ok=True)
    failed = []
    for name in names:
        bench, log_name, extra_env, args = RUNS[name]
        env = dict(os.environ, **extra_env)
        if quick:
            env["KEEPSAKE_BENCH_QUICK"] = "1"
        if quick and not args and bench not in ("frame_time", "memory"):
            args = ["--warm-up-time", "1", "--measurement-time", "2"]
        command = ["cargo", "bench", *older_rust_flags(), "--bench", bench,
                   *(["--", *args] if args else [])]
        print(f"== {' '.join(command)}  ({datetime.datetime.now():%H:%M:%S})", flush=True)
        began, load_before = datetime.datetime.now(datetime.timezone.utc), os.getloadavg()
        with open(LOGS / f"{log_name}.log", "w") as log:
            done = subprocess.run(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        # When it ran and how busy the machine was (1-minute load average before and after,
        # the build included), for the report's reader.
        (LOGS / f"{log_name}.run.json").write_text(json.dumps({
            "began": began.isoformat(timespec="minutes"),
            "ended": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="minutes"),
            "load_before": round(load_before[0], 2), "load_after": round(os.getloadavg()[0], 2),
            "quick": quick, "command": " ".join(command), "env": extra_env}))
        if done.returncode != 0:
            print(f"   failed ({done.returncode}): see {LOGS / (log_name + '.log')}", flush=True)
            failed.append(name)
    return failed

# ---------------------------------------------------------------------------------------------
# The data at hand: criterion's means, the benches' logs, when each was measured.

def estimates():
    """benchmark id ("group/function/param") -> (mean time in ns, when it was measured)."""
    found = {}
    for path in CRITERION.glob("**/new/estimates.json"):
        bench_id = str(path.parent.parent.relative_to(CRITERION))
        with open(path) as f:
            found[bench_id] = (json.load(f)["mean"]["point_estimate"], mtime(path))
    return found


def mtime(path):
    return datetime.datetime.fromtimestamp(path.stat().st_mtime, datetime.timezone.utc)


def log_text(name):
    path = LOGS / f"{name}.log"
    return path.read_text() if path.exists() else ""


def newest_log(*names):
    """The newest of these logs that exists (a whole bench's or a targeted run's), or None."""
    found = [LOGS / f"{name}.log" for name in names if (LOGS / f"{name}.log").exists()]
    return max(found, key=lambda path: path.stat().st_mtime).stem if found else None


def when(name):
    """When a log's run ended and how it ran, for a table's *Measured* line."""
    path = LOGS / f"{name}.log"
    if not path.exists():
        return "not measured"
    text = f"{mtime(path):%Y-%m-%d %H:%M} UTC"
    info = LOGS / f"{name}.run.json"
    if info.exists():
        run = json.loads(info.read_text())
        text += (f", `{run['command']}`"
                 + "".join(f" `{k}={v}`" for k, v in run.get("env", {}).items()
                           if k != "KEEPSAKE_BENCH_TRACES")
                 + (", quick mode" if run.get("quick") else "")
                 + f", load average {run['load_before']} before / {run['load_after']} after")
    else:
        text += ", an earlier run (its command and load not recorded)"
    return text


def machine():
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory = ""
    try:
        kib = int(Path("/proc/meminfo").read_text().split()[1])
        memory = f", {kib / (1 << 20):.0f} GiB RAM"
    except (OSError, ValueError, IndexError):
        pass
    rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True).stdout.strip()
    return f"{cpu}, {os.cpu_count()} cores{memory}, {platform.system()} {platform.release()}; {rustc}"


def fmt_ms(ms):
    if ms is None:
        return "—"
    if ms >= 1000:
        return f"{ms / 1000:.2f} s"
    if ms >= 10:
        return f"{ms:.1f} ms"
    if ms >= 1:
        return f"{ms:.2f} ms"
    return f"{ms * 1000:.0f} µs"


def fmt_ns(ns):
    return None if ns is None else fmt_ms(ns / 1e6)


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join("—" if c is None else str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Targets: each judged on the worst row (shape and size) of its table.

class Target:
    """One performance target: `values` maps a row's label to its figure; the worst row decides.
    `limit` is a maximum when `at_most`, else a minimum."""

    def __init__(self, what, limit, at_most, unit, values, source):
        self.what, self.limit, self.at_most, self.unit = what, limit, at_most, unit
        self.values = {k: v for k, v in values.items() if v is not None}
        self.source = source

    def show(self, value):
        return {"×": f"{value:.2f}×", "ms": fmt_ms(value), "frames": f"{value:.0f}"}[self.unit]

    def worst(self):
        if not self.values:
            return None, None
        pick = max if self.at_most else min
        return pick(self.values.items(), key=lambda item: item[1])

    def met(self):
        _, value = self.worst()
        if value is None:
            return None
        return value <= self.limit if self.at_most else value >= self.limit

    def limit_text(self):
        shown = {"×": f"{self.limit:g}×", "ms": f"{self.limit:g} ms", "frames": f"{self.limit:g}"}
        return ("≤ " if self.at_most else "≥ ") + shown[self.unit]

    def verdict(self):
        row, value = self.worst()
        if value is None:
            return "not measured"
        if self.met():
            return f"met (worst {self.show(value)}, {row})"
        if self.limit == 0:
            return f"**missed**: {self.show(value)} on {row}"
        if self.at_most:
            return f"**missed**: {self.show(value)} on {row} ({value / self.limit:.1f}× the limit)"
        return f"**missed**: {self.show(value)} on {row} ({(1 - value / self.limit) * 100:.0f} % short)"

    def line(self):
        missed = [k for k, v in self.values.items()
                  if not (v <= self.limit if self.at_most else v >= self.limit)]
        tail = ""
        if missed and self.met() is False and len(self.values) > 1:
            tail = f" Missed on {len(missed)} of {len(self.values)} rows."
        return f"- {self.what} {self.limit_text()}: {self.verdict()}.{tail}"


def pick(pattern, text, flags=0):
    match = re.search(pattern, text, flags)
    return match.groups() if match else None


def row_label(shape, count):
    return f"`{shape}` {count // 1000}k"


# ---------------------------------------------------------------------------------------------
# The frame bench (benches/frame_time.rs): autosave, F9 in session, load at start, held rewind.

FRAME_PATTERNS = {
    "without": r"without autosave: p50 ([\d.]+) ms, p99 ([\d.]+) ms, (\d+) frames over",
    "with": r"with autosave: +p50 ([\d.]+) ms, p99 ([\d.]+) ms, (\d+) frames over",
    "capture": r"capture per save \(\d+ saves\): p50 ([\d.]+) ms, p99 ([\d.]+) ms on the main "
               r"thread; latency p50 ([\d.]+) ms, p99 ([\d.]+) ms",
    "f9": r"F9 in session \((\d+) loads.*?apply p50 ([\d.]+) ms, p99 ([\d.]+) ms on the main "
          r"thread; frames p50 [\d.]+ ms, p99 ([\d.]+) ms, worst per load p50 [\d.]+ ms, p99 "
          r"([\d.]+) ms, (\d+) frames over 16.7 ms; first save after it: capture p50 [\d.]+ ms, "
          r"p99 ([\d.]+) ms",
    "start": r"load at start \((\d+) loads into an empty world\): apply p50 ([\d.]+) ms, p99 "
             r"([\d.]+) ms on the main thread; worst frame p50 [\d.]+ ms, p99 ([\d.]+) ms",
    "held": r"rewind held \((\d+) steps.*?step apply p50 ([\d.]+) ms, p99 ([\d.]+) ms on the "
            r"main thread; frames p50 [\d.]+ ms, p99 ([\d.]+) ms, (\d+) frames over 16.7 ms; "
            r"(\d+) landed in the frame asked, the latest (\d+) frames late, (\d+) refused",
}


def frame_data():
    """(shape, count) -> {scenario: numbers} from the frame bench's log (a shape and count run
    twice keeps its last run)."""
    found = {}
    for block in re.split(r"^(?=frame_time/)", log_text("frame_time"), flags=re.M)[1:]:
        head = re.match(r"frame_time/(\S+), (\d+) entities, (\d+) frames", block)
        if not head:
            continue
        got = {"frames": int(head.group(3))}
        for key, pattern in FRAME_PATTERNS.items():
            numbers = pick(pattern, block, re.S)
            if numbers:
                got[key] = [float(n) for n in numbers]
        if "without" in got and "with" in got:
            found[(head.group(1), int(head.group(2)))] = got
    return found


FRAME_INTRO = """A headless game (`benches/frame_time.rs`): frames paced to 60 FPS (the wait for vsync
is not in a frame's time), two busy systems of 3 ms each run in parallel on two compute
threads, a tenth of the entities move every frame. *With autosave* a save is asked every 10
frames (10 % of the entities changed since the last); *F9* is a quicksave, 10 frames of motion,
then a quickload in place; *held rewind* takes a point every frame, then steps back one point a
frame with motion paused. The anchor of each row is the same game without saves, measured in
the same run, and the frame budget of 16.7 ms."""

FRAME_WHY = """Why: the main thread's part of each save (the incremental capture, below) lands in
one frame, so the p99 of a game with autosave is a save frame: the busy systems plus the
capture. The pool's part runs at low priority in the time frames leave idle but shares the two
cores and the memory bus."""


# A run whose frames without saves reach this p99 was disturbed (the busy systems take 6 ms).
DISTURBED_MS = 10.0


def first_save_frames(frames):
    """The first (full) save's frame in each plotted F9 trace, as "`shape` Nk: X ms"."""
    found = []
    for name, _ in trace_plots(frames):
        shape, count = re.fullmatch(r"frame_trace_(.+)_(\d+)k\.svg", name).groups()
        trace = read_trace(f"{shape}_{int(count) * 1000}_f9")
        if trace and trace[0][2] == "save":
            found.append(f"`{shape}` {count}k {fmt_ms(trace[0][1])}")
    return found


def frame_section(frames, targets):
    if not frames:
        return ["## Frames: autosave, F9 and rewind in a game\n",
                "Not measured: no frame bench log at hand (`--only frame_time`).\n"]
    out = ["## Frames: autosave, F9 and rewind in a game\n",
           f"Measured {when('frame_time')}, {next(iter(frames.values()))['frames']} frames per run.",
           FRAME_INTRO + "\n"]
    out += [f"![{title}](docs/bench/{name})\n" for name, title in trace_plots(frames)]
    rows, added, ratio = [], {}, {}
    for (shape, n), f in frames.items():
        wo, w, cap = f["without"], f["with"], f.get("capture")
        added[row_label(shape, n)] = max(0.0, w[2] - wo[2])
        ratio[row_label(shape, n)] = w[1] / wo[1]
        mark = " †" if wo[1] > DISTURBED_MS else ""
        rows.append([f"`{shape}`", f"{n // 1000}k{mark}", fmt_ms(wo[1]), fmt_ms(w[1]),
                     f"{w[1] / wo[1]:.2f}×", f"{wo[2]:.0f} / {w[2]:.0f}",
                     fmt_ms(cap[1]) if cap else None, fmt_ms(cap[3]) if cap else None])
    out += ["### Autosave every 10 frames\n",
            table(["shape", "entities", "frame p99 without saves (anchor)", "frame p99 with autosave",
                   "with / without", "frames over 16.7 ms without / with",
                   "save's main-thread part p99", "save latency p99"], rows), ""]
    group = [
        Target("Frames over 16.7 ms added by autosaves (10k, 100k)", 0, True, "frames", added,
               "frame_time"),
        Target("Frame p99 with autosave / without", 1.10, True, "×", ratio, "frame_time"),
    ]
    out += [t.line() for t in group] + [""]
    disturbed = [row_label(s, n) for (s, n), f in frames.items() if f["without"][1] > DISTURBED_MS]
    if disturbed:
        out += [f"† Disturbed: frames *without* saves reached a p99 over {DISTURBED_MS:g} ms "
                "(the busy systems take 6 ms), so other work on this shared machine ran during "
                "the row's runs and its ratio understates what saving costs. Rows: "
                + ", ".join(disturbed) + ".", ""]
    first = first_save_frames(frames)
    if first:
        out += ["Not in the targets: the first save of a session captures the whole world on the "
                "main thread (every later one only what changed), and its frame is the F9 panel's "
                "first point: " + ", ".join(first) + ".", ""]
    if not all(t.met() for t in group):
        out += [FRAME_WHY, ""]
    targets += group

    rows, f9_over, held_over, held_late = [], {}, {}, {}
    for (shape, n), f in frames.items():
        f9, held = f.get("f9"), f.get("held")
        if not (f9 and held):
            continue
        f9_over[row_label(shape, n)] = f9[5]
        if n <= 10000:
            held_over[row_label(shape, n)] = held[4]
            held_late[row_label(shape, n)] = held[6]
        rows.append([f"`{shape}`", f"{n // 1000}k", fmt_ms(f["without"][1]), fmt_ms(f9[2]),
                     fmt_ms(f9[4]), f"{f9[5]:.0f}", fmt_ms(f9[6]), fmt_ms(held[2]), fmt_ms(held[3]),
                     f"{held[4]:.0f}", f"{held[5]:.0f} of {held[0] + held[7]:.0f}"
                     + (f", {held[7]:.0f} refused" if held[7] else "")])
    if rows:
        out += ["### F9 in session and held rewind\n",
                table(["shape", "entities", "frame p99 without saves (anchor)", "F9: load's main-thread part p99",
                       "F9: worst frame p99", "F9: frames over 16.7 ms",
                       "first save after F9: main-thread part p99", "rewind step's main-thread part p99",
                       "held rewind: frame p99", "held rewind: frames over 16.7 ms",
                       "steps landed in the frame asked"], rows), ""]
        group = [
            Target("Frames over 16.7 ms from an in-session load (F9), 10k and 100k", 0, True,
                   "frames", f9_over, "frame_time"),
            Target("Frames over 16.7 ms while holding rewind, 10k", 0, True, "frames", held_over,
                   "frame_time"),
            Target("Frames from a rewind request to the world restored, 10k", 1, True, "frames",
                   held_late, "frame_time"),
        ]
        out += [t.line() for t in group] + [""]
        refused = [row_label(s, n) for (s, n), f in frames.items() if f.get("held") and f["held"][7]]
        if refused:
            out.append("Refused steps (" + ", ".join(refused) + ") are rewinds the plugin "
                       "answered with `RewindFailed` (the bench counts them without their reason; "
                       "`InProgress`, a step asked while the one before is still being put "
                       "together on the pool, is one). Holding rewind is a target at 10k only.\n")
        targets += group
    return out
# ---------------------------------------------------------------------------------------------
# The shapes bench (benches/shapes.rs): capture and load against DynamicWorld, the parts of a save.

SHAPES = {
    "real-game": "squads → units → equipment; references, enums, maps; mostly reflection-only",
    "tried": "the world issue 24 was found on: strings, maps, options, enums; serde and reflection mixed",
    "deep": "binary trees six levels deep (62 of 63 entities are children)",
    "strings-maps": "strings, `Vec<String>`, a `HashMap<String, u32>` of 8–15 entries per entity",
    "many-small": "16 small reflection-only components per entity",
    "large": "two large components per entity (`Vec`s of 48 `Vec2` and 96 `u16`)",
    "reflect-only": "no type has serde; structs, enums with data, nested `Vec`s; two-level hierarchy",
    "handles": "sprites: a serde `Transform` and a reflection-only value with an asset handle",
}
PART = r"(shapes|rewind) part, (\S+), (\d+) entities, (\w+): p50 ([\d.]+) ms, p99 ([\d.]+) ms"


def parts(log):
    """(shape, count, part) -> (p50 ms, p99 ms) from a bench's printed percentiles."""
    return {(s, int(n), name): (float(p50), float(p99))
            for _, s, n, name, p50, p99 in re.findall(PART, log)}


def shape_data(est):
    """What the shapes bench measured: criterion means by (shape, part, count), sizes by
    (shape, count), percentiles by (shape, count, part), and the log it came from."""
    name = newest_log("shapes_capture_load", "shapes")
    if name is None:
        return None
    log = log_text(name)
    sizes = {(s, int(n)): (int(blob), int(dw)) for s, n, blob, dw in re.findall(
        r"shapes size, (\S+), (\d+) entities: keepsake blob (\d+) bytes, DynamicWorld postcard "
        r"(\d+) bytes", log)}
    mean = {}
    for bench_id, (ns, _) in est.items():
        m = re.fullmatch(r"shapes_(\S+)/(\w+)/(\d+)", bench_id)
        if m and (m.group(1), int(m.group(3))) in sizes:
            mean[(m.group(1), m.group(2), int(m.group(3)))] = ns
    failed = sorted(set(re.findall(r"shapes round trip FAILED: (\S+), (\w+), (\d+)", log)))
    return {"log": name, "sizes": sizes, "mean": mean, "parts": parts(log), "failed": failed}


def capture_load_section(data, targets):
    out = ["## Capture and load against `DynamicWorld`\n"]
    if data is None:
        return out + ["Not measured: no shapes bench log at hand (`--only capture_load`).\n"]
    mean, sizes = data["mean"], data["sizes"]
    shapes = list(dict.fromkeys(s for s, _ in sizes))
    out += [f"Measured {when(data['log'])}. Criterion means; the anchor is Bevy's `DynamicWorld` "
            "of the same world in the same run, serialized with postcard (save) and deserialized "
            "and written into a fresh world (load). Every load was checked to hold the saved "
            "entities and `ChildOf` links"
            + (": **round trip failed** for " + ", ".join(" ".join(f) for f in data["failed"])
               if data["failed"] else "") + ". The world shapes (`benches/common/shapes.rs`):\n"]
    out += [f"- `{s}`: {SHAPES.get(s, '')}" for s in shapes] + [""]
    out.append("![Capture and load time against entity count](docs/bench/capture_load.svg)\n")
    rows, cap, load, size, scale_cap, scale_load = [], {}, {}, {}, {}, {}
    for (s, n), (blob, dw) in sizes.items():
        c, dc = mean.get((s, "capture", n)), mean.get((s, "dw_postcard_save", n))
        l, dl = mean.get((s, "decode_apply", n)), mean.get((s, "dw_postcard_load", n))
        size[row_label(s, n)] = dw / blob
        if n == 10000:
            cap[row_label(s, n)] = dc / c if c and dc else None
            load[row_label(s, n)] = dl / l if l and dl else None
        if n == 100000:
            c1, l1 = mean.get((s, "capture", 1000)), mean.get((s, "decode_apply", 1000))
            scale_cap[f"`{s}`"] = c / c1 if c and c1 else None
            scale_load[f"`{s}`"] = l / l1 if l and l1 else None
        if n < 10000:
            continue
        rows.append([f"`{s}`", f"{n // 1000}k", fmt_ns(c), fmt_ns(dc),
                     f"{dc / c:.2f}×" if c and dc else None, fmt_ns(l), fmt_ns(dl),
                     f"{dl / l:.2f}×" if l and dl else None, f"{blob / 1e6:.2f} MB",
                     f"{dw / blob:.2f}×"])
    out += [table(["shape", "entities", "capture + encode", "`DynamicWorld` + postcard save",
                   "DW / ours", "decode + apply", "`DynamicWorld` + postcard load", "DW / ours",
                   "ecs_blob", "DW postcard / blob"], rows), ""]
    group = [
        Target("Full capture at 10k, `DynamicWorld` + postcard / ours", 8, False, "×", cap, data["log"]),
        Target("Decode + apply at 10k, `DynamicWorld` + postcard / ours", 4, False, "×", load, data["log"]),
        Target("Size, `DynamicWorld` postcard / ecs_blob (before compression)", 3, False, "×", size,
               data["log"]),
        Target("Capture time 100k / 1k (linear)", 105, True, "×", scale_cap, data["log"]),
        Target("Decode + apply time 100k / 1k (linear)", 105, True, "×", scale_load, data["log"]),
    ]
    out += [t.line() for t in group]
    out += ["- Against `DynamicWorld` + RON (≥ 30× capture, ≥ 10× load): not in these runs (the "
            "`snapshot` bench measures RON on one world; run `cargo bench --bench snapshot`).", ""]
    if not all(t.met() for t in group[:3]):
        out += [CAPTURE_WHY, ""]
    targets += group
    return out


CAPTURE_WHY = """Why (profiles of 2026-11-24): a type that holds an asset handle has no reflection
plan, so the `handles` shape is written and read by Bevy's reflection serializer with the
handle processors, about as `DynamicWorld` is. Elsewhere a load pays a box per value, the
archetype move of each entity and the commands Bevy's `ChildOf` hook queues (`deep`); a
capture of `deep` cannot spread its hierarchy order. Strings and maps (`strings-maps`) and
`Vec`s of numbers (`large`) are bytes either way, hence sizes near `DynamicWorld`'s."""

SAVE_WHY = """Why: what is left on the main thread is encoding the changed values themselves (10k
maps of 8–15 strings on `strings-maps`, 10k `Vec`s of 96 `u16` on `large`); the rest of the
world is kept between captures. A copy of the changed values to encode them on the pool would
cost more than encoding them on `strings-maps` (each string allocated again), and a plugin
cannot clone a registered type without a `Clone` bound. In the pool's part a 1 % change spread
over the world still touches every 1024-row chunk of the moving column (on `large` every
capture chunk holds a changed row, and page faults of the fresh 58 MB blob were a fifth of the
pool's part), and the whole blob is hashed twice and copied once."""


def save_section(data, frames, targets):
    out = ["## Saving: the main thread's part and the pool's\n"]
    if data is None:
        return out + ["Not measured: no shapes bench log at hand (`--only capture_load`).\n"]
    mean, p = data["mean"], data["parts"]
    shapes = list(dict.fromkeys(s for s, _ in data["sizes"]))
    out.append(f"Measured {when(data['log'])} (shapes bench) and {when('frame_time')} (frame "
               "bench), at 100k entities. *Main, 10 % changed*: `CaptureCache::capture` after every "
               "10th entity changed since the last capture; its anchor is a full capture of the "
               "same world. *Pool*: joining, hashing and encoding the save after 1 % changed, "
               "against a full save's (the durable write not included).\n")
    rows, main, game, pool = [], {}, {}, {}
    for s in shapes:
        m = p.get((s, 100000, "main_10pct"))
        full = mean.get((s, "capture", 100000))
        p1, pf = mean.get((s, "pool_1pct", 100000)), mean.get((s, "pool_full", 100000))
        f = frames.get((s, 100000), {}).get("capture")
        if not (m or f):
            continue
        main[f"`{s}`"] = m[1] if m else None
        game[f"`{s}`"] = f[1] if f else None
        pool[f"`{s}`"] = p1 / pf if p1 and pf else None
        rows.append([f"`{s}`", f"{fmt_ms(m[0])} / {fmt_ms(m[1])}" if m else None, fmt_ns(full),
                     fmt_ms(f[1]) if f else None, fmt_ns(p1), fmt_ns(pf),
                     f"{p1 / pf:.2f}×" if p1 and pf else None])
    out += [table(["shape (100k)", "main, 10 % changed, p50 / p99", "full capture (anchor)",
                   "in the game: save's main-thread part p99", "pool, 1 % changed",
                   "pool, full save (anchor)", "1 % / full"], rows), ""]
    group = [
        Target("Main-thread part of a save, 100k, 10 % changed, p99", 1.0, True, "ms", main, data["log"]),
        Target("The same in the game (`SaveCompleted::capture_time`), p99", 1.0, True, "ms", game,
               "frame_time"),
        Target("Pool work of a save, 100k, 1 % changed / a full save's", 0.10, True, "×", pool,
               data["log"]),
    ]
    out += [t.line() for t in group] + [""]
    if not all(t.met() for t in group):
        out += [SAVE_WHY, ""]
    targets += group
    return out


def load_at_start_section(frames, targets):
    """Issue 42's load at start: our apply into a world with no saved entity against
    `DynamicWorld::write_to_world`, from the shapes bench's `apply_at_start` / `dw_apply`."""
    out = ["## Load at start\n"]
    log = log_text("shapes_load_at_start")
    got = {}
    for s, n, name, p50, p99 in re.findall(
            r"shapes part, (\S+), (\d+) entities, (apply_at_start|dw_apply): p50 ([\d.]+) ms, "
            r"p99 ([\d.]+) ms", log):
        got.setdefault((s, int(n)), {})[name] = (float(p50), float(p99))
    if not got:
        return out + ["Not measured: no log at hand (`--only load_at_start`).\n"]
    out.append(f"Measured {when('shapes_load_at_start')} (shapes bench) and {when('frame_time')} "
               "(frame bench). The main thread's part of loading a save into a world with no "
               "saved entity (every entity spawned): `snapshot::apply` of the decoded save, "
               "against `DynamicWorld::write_to_world` of the same world (decoding not timed in "
               "either); p50 / p99 over every timed run. *In the game* is the same load through "
               "the plugin (`LoadCompleted::apply_time`, 3 loads) and the frame it lands in.\n")
    rows, p99s, ratio, game = [], {}, {}, {}
    for (s, n), g in got.items():
        ours, dw = g.get("apply_at_start"), g.get("dw_apply")
        if not (ours and dw):
            continue
        f = frames.get((s, n), {}).get("start")
        p99s[f"`{s}`"], ratio[f"`{s}`"] = ours[1], dw[0] / ours[0]
        game[f"`{s}`"] = f[2] if f else None
        rows.append([f"`{s}`", f"{n // 1000}k", f"{fmt_ms(ours[0])} / {fmt_ms(ours[1])}",
                     f"{fmt_ms(dw[0])} / {fmt_ms(dw[1])}", f"{dw[0] / ours[0]:.2f}×",
                     f"{fmt_ms(f[2])} / {fmt_ms(f[3])}" if f else None])
    out += [table(["shape", "entities", "ours p50 / p99", "`DynamicWorld` p50 / p99 (anchor)",
                   "DW / ours (p50)", "in the game: apply / worst frame p99"], rows), ""]
    group = [
        Target("Load at start, 100k: main thread p99", 100, True, "ms", p99s, "shapes_load_at_start"),
        Target("Load at start, 100k, in the game: main thread p99", 100, True, "ms", game, "frame_time"),
        Target("Load at start, 100k: `DynamicWorld` / ours (issue 42)", 4, False, "×", ratio,
               "shapes_load_at_start"),
    ]
    out += [t.line() for t in group] + [""]
    if not all(t.met() for t in group):
        out += ["Why: spawning is the floor. Every entity is spawned and its components inserted "
                "column by column; what remains over 100 ms (`many-small`: 16 components per "
                "entity) is Bevy's archetype moves and the values' boxes. A load into a running "
                "session (F9, above) writes over live entities instead and stays within a frame.\n"]
    targets += group
    return out


# ---------------------------------------------------------------------------------------------
# The rewind bench (benches/rewind.rs) and the store bench (benches/store.rs).

def rewind_section(est, targets):
    out = ["## Rewind ring\n"]
    log = log_text("rewind")
    p = parts(log)
    memory = {s: (float(held), float(added)) for s, held, added in re.findall(
        r"rewind memory, (\S+), \d+ entities: .*?\(([\d.]+)x one blob.*?\(([\d.]+)x\)", log)}
    shapes = list(dict.fromkeys(s for s, _, _ in p))
    if not shapes:
        return out + ["Not measured: no rewind bench log at hand (`--only rewind`).\n"]
    out.append(f"Measured {when('rewind')}, 10k entities, 60 points 1 % apart. *Step*: one rewind "
               "step in place to the newest point after 1 % changed (a capture and "
               "`snapshot::restore`, the main thread's part); its anchor is the same rewind by "
               "despawning and respawning every entity (`respawn`, how rewinds worked before "
               "issue 42). *Point*: the main thread's part of taking a point. *Memory*: what 60 "
               "points hold (`RewindRing::memory`, the figure the budget checks, counting chunks "
               "shared with the capture cache) and what keeping them added to the heap, in blobs.\n")
    rows, step, point, held, added = [], {}, {}, {}, {}
    for s in shapes:
        q = lambda name: p.get((s, 10000, name))
        st, rs, far, pt = q("step_newest_1pct"), q("respawn_main"), q("far_pool"), q("point_1pct")
        mem = memory.get(s)
        step[f"`{s}`"] = st[1] if st else None
        point[f"`{s}`"] = pt[1] if pt else None
        held[f"`{s}`"], added[f"`{s}`"] = (mem if mem else (None, None))
        two = lambda v: f"{fmt_ms(v[0])} / {fmt_ms(v[1])}" if v else None
        rows.append([f"`{s}`", two(st), two(rs), two(pt), two(far),
                     f"{mem[0]:.2f}× / {mem[1]:.2f}×" if mem else None])
    out += [table(["shape (10k)", "step, p50 / p99", "respawn (anchor), p50 / p99",
                   "point, p50 / p99", "far rewind on the pool, p50 / p99",
                   "memory held / added"], rows), ""]
    group = [
        Target("Rewind step to the newest point, 10k, 1 % changed: main thread p99", 1.0, True,
               "ms", step, "rewind"),
        Target("Rewind point, 10k, 1 % changed: main thread p99 (issue 26)", 0.2, True, "ms",
               point, "rewind"),
        Target("60 points: memory held, in blobs (issue 26)", 2.0, True, "×", held, "rewind"),
        Target("60 points: heap added, in blobs (issue 26)", 2.0, True, "×", added, "rewind"),
    ]
    out += [t.line() for t in group] + [""]
    if not all(t.met() for t in group):
        out += ["Why: a point is an incremental capture, so it costs what the changed values cost "
                "to encode (strings, maps, long `Vec`s, sixteen components per entity); memory "
                "held counts the capture cache's own chunks, row ends and entity arrays, which "
                "weigh most beside the smallest blobs.\n"]
    targets += group
    return out


def store_section(est, targets):
    out = ["## Store: durable save and load, sealing, listing\n"]
    name = newest_log("store_targets", "store")
    mean = {k: v[0] for k, v in est.items() if k.startswith(("save_load/", "listing/"))}
    g = lambda bench_id: mean.get(bench_id)
    if name is None or g("save_load/full_save/1MB") is None:
        return out + ["Not measured: no store bench log at hand (`--only store_targets`).\n"]
    codec = "; ".join(re.findall(r"save_load (\S+: payload stored with [^,]+)", log_text(name)))
    out.append(f"Measured {when(name)}. Criterion means through `SlotStore`, in a temporary folder "
               "on this machine's disk. `1MB` is a game-like bundle of random floats (LZ4 does not "
               "pay: stored as is), `1MB_world` a megabyte of a captured world (stored with LZ4)"
               + (f"; the codec chosen: {codec}" if codec else "") + ". The anchors: a bare "
               "temp-write + fsync + rename + folder fsync of the same bytes, a bare `fs::read` of "
               "the same file, the unsealed save and load.\n")
    rows, checks = [], []
    spec = [
        ("Save 1 MB, ours / bare durable write", "full_save", "baseline_durable_write", 1.5),
        ("Load 1 MB, ours / bare read", "full_load", "baseline_fs_read", 6.0),
        ("Sealed save / unsealed save (issue 26)", "sealed_full_save", "full_save", 1.2),
        ("Sealed load / unsealed load (issue 26)", "sealed_full_load", "full_load", 1.2),
    ]
    for what, ours, anchor, limit in spec:
        values = {}
        for size in ("1MB", "1MB_world"):
            a, b = g(f"save_load/{ours}/{size}"), g(f"save_load/{anchor}/{size}")
            if a is None or b is None:
                continue
            values[f"`{size}`"] = a / b
            rows.append([f"`{ours}/{size}`", fmt_ns(a), f"`{anchor}`: {fmt_ns(b)}", f"{a / b:.2f}×",
                         f"≤ {limit}×"])
        checks.append(Target(what, limit, True, "×", values, name))
    small, big = g("listing/list_16_slots/10KB"), g("listing/list_16_slots/5MB")
    if small and big:
        rows.append(["`list_16_slots/5MB`", fmt_ns(big), f"`list_16_slots/10KB`: {fmt_ns(small)}",
                     f"{big / small:.2f}×", "≤ 1.2×"])
        checks.append(Target("Listing 16 slots, 5 MB saves / 10 KB saves (headers only)", 1.2,
                             True, "×", {"16 slots": big / small}, name))
    out += [table(["benchmark", "ours", "anchor", "ours / anchor", "target"], rows), ""]
    out += [t.line() for t in checks] + [""]
    why = []
    if checks[0].met() is False:
        added = ", ".join(f"`{size}` {fmt_ns(g(f'save_load/full_save/{size}') - g(f'save_load/baseline_durable_write/{size}'))}"
                          for size in ("1MB", "1MB_world")
                          if g(f"save_load/full_save/{size}") and g(f"save_load/baseline_durable_write/{size}"))
        why.append("- Save: what a save adds to the bare write (" + added + ") is encoding the "
                   "megabyte: the bundle's postcard copy, content-defined chunking and hashing "
                   "against the chunk cache, CRCs. The faster this machine's `fsync`, the larger "
                   "that share; not profiled further.")
    if checks[1].met() is False:
        why.append("- Load: a world's payload is stored with LZ4 (to about 46 %), so its bare "
                   "read is of a file half the size, from the page cache; checking, decompressing "
                   "and decoding the whole megabyte costs many times that read.")
    if len(checks) > 3 and checks[3].met() is False:
        why.append("- Sealed load: an unsealed payload stored as is decodes in place from the "
                   "file's buffer in about 0.1 ms, while opening the seal (AES-256-GCM) is two "
                   "passes over the megabyte; within 1.2× it would have to run at over 40 GB/s. "
                   "A sealed save stays within 1.2× because its two `fsync`s dominate.")
    if why:
        out += ["Why:\n"] + why + [""]
    targets += checks
    return out
# ---------------------------------------------------------------------------------------------
# Plots (matplotlib, SVG). Drawn only when matplotlib imports; the report says when they were not.

def matplotlib_pyplot():
    """pyplot set up for small, reproducible SVGs, or None (with the reason printed)."""
    try:
        import matplotlib
    except ImportError:
        print("plots not redrawn: matplotlib is not installed for this python. See "
              "`python3 scripts/bench_report.py --help` for a venv outside the repository.",
              file=sys.stderr)
        return None
    matplotlib.use("svg")
    import matplotlib.pyplot as plt
    plt.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "bevy_keepsake",
                         "font.size": 9, "axes.spines.top": False, "axes.spines.right": False})
    return plt


def save_svg(plt, figure, name):
    PLOTS.mkdir(parents=True, exist_ok=True)
    figure.savefig(PLOTS / name, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(figure)
    print(f"wrote {PLOTS / name}")


def read_trace(name):
    """[(frame, ms, mark)] of one trace the frame bench wrote, or None."""
    path = TRACES / f"{name}.csv"
    if not path.exists():
        return None
    rows = [line.split(",") for line in path.read_text().splitlines()[1:] if line]
    return [(int(f), float(ms), mark) for f, ms, mark in rows]


def trace_plots(frames):
    """(file name, title) of the frame-trace plots the report shows: `real-game` at each size
    and the shape whose autosave costs the frame most (p99 with / without) at 100k."""
    shapes = [("real-game", n) for n in (10000, 100000) if ("real-game", n) in frames]
    at_100k = {s: f["with"][1] / f["without"][1] for (s, n), f in frames.items() if n == 100000}
    if at_100k:
        worst = max(at_100k, key=at_100k.get)
        if (worst, 100000) not in shapes:
            shapes.append((worst, 100000))
    return [(f"frame_trace_{s}_{n // 1000}k.svg",
             f"Frame times of the {s} world at {n // 1000}k entities: without saves, with "
             "autosave, F9 in session, holding rewind") for s, n in shapes]


SCENARIOS = [
    ("with", "Autosave every 10 frames (grey: no saves)", "save", "#d95f02"),
    ("f9", "F9: quicksave, 10 frames, quickload, save", "load", "#7570b3"),
    ("rewind", "A point a frame, then rewind held", "rewind", "#1b9e77"),
]


# The frame-trace plots' highest time drawn to scale (above it, a point's time is written).
CLIP_MS = 40.0


def draw_frame_traces(plt, frames):
    """One SVG per shown shape and size: a panel per scenario, frame time against frame."""
    drawn = []
    for name, _ in trace_plots(frames):
        shape, count = re.fullmatch(r"frame_trace_(.+)_(\d+)k\.svg", name).groups()
        key = f"{shape}_{int(count) * 1000}"
        traces = {s: read_trace(f"{key}_{s}") for s in ("without", "with", "f9", "rewind")}
        if not any(traces.values()):
            print(f"no frame traces for {key} in {TRACES} (run with --only frame_time)",
                  file=sys.stderr)
            continue
        # Frames far over the budget (a session's first, full save) are drawn at the top with
        # their time written beside them, so they do not flatten the rest.
        highest = max([BUDGET_MS * 1.25] + [ms * 1.1 for t in traces.values() if t for _, ms, _ in t])
        top = min(highest, CLIP_MS)
        figure, axes = plt.subplots(len(SCENARIOS), 1, figsize=(9, 7), sharey=True)
        for ax, (scenario, title, mark, colour) in zip(axes, SCENARIOS):
            trace = traces[scenario]
            if scenario == "with" and traces["without"]:
                ax.plot([f for f, _, _ in traces["without"]], [min(ms, top) for _, ms, _ in traces["without"]],
                        color="#bbbbbb", linewidth=1, label="without saves")
            if trace:
                clip = lambda ms: min(ms, top)
                ax.plot([f for f, _, _ in trace], [clip(ms) for _, ms, _ in trace],
                        color="#333333", linewidth=1, label="frame time")
                marked = [(f, clip(ms)) for f, ms, m in trace if m == mark]
                if marked:
                    ax.scatter(*zip(*marked), s=14, color=colour, zorder=3,
                               label=f"{mark} asked")
                other = [(f, clip(ms)) for f, ms, m in trace if m and m != mark and m != "point"]
                if other:
                    ax.scatter(*zip(*other), s=10, color="#e7298a", zorder=3,
                               label="save asked")
            written = -10
            for f, ms, _ in trace or []:
                if ms > top and f - written > 4:
                    ax.annotate(f"{ms:.0f} ms", (f, top), textcoords="offset points",
                                xytext=(3, -9), fontsize=7, color="#333333")
                    written = f
            ax.axhline(BUDGET_MS, color="#cc0000", linestyle="--", linewidth=1)
            ax.text(1.0, BUDGET_MS, " 16.7 ms", color="#cc0000", va="center",
                    transform=ax.get_yaxis_transform())
            ax.set_ylim(0, top)
            ax.set_title(title, loc="left", fontsize=9)
            ax.set_ylabel("ms")
            ax.legend(loc="lower right", bbox_to_anchor=(1.0, 1.0), fontsize=7, frameon=False,
                      ncol=3, borderaxespad=0.2)
        axes[-1].set_xlabel("frame")
        figure.suptitle(f"Frame time, `{shape}` world, {count}k saved entities, paced to 60 FPS",
                        fontsize=10)
        figure.tight_layout()
        save_svg(plt, figure, name)
        drawn.append(name)
    # A shape that is no longer the worst leaves no picture behind for the report to link.
    for stale in PLOTS.glob("frame_trace_*.svg") if drawn else []:
        if stale.name not in drawn:
            stale.unlink()
            print(f"removed {stale}")
    return drawn


def draw_capture_load(plt, data):
    """Capture and load time against entity count, ours and `DynamicWorld`'s, on `real-game`
    and the shapes the targets are worst on (10k, DW / ours)."""
    if data is None:
        return []
    mean = data["mean"]
    counts = sorted({n for _, n in data["sizes"]})
    shapes = list(dict.fromkeys(s for s, _ in data["sizes"]))
    ratio = lambda s, ours, dw: (mean.get((s, dw, 10000)) or 0) / (mean.get((s, ours, 10000)) or 1)
    chosen = ["real-game"] if "real-game" in shapes else []
    for ours, dw in (("capture", "dw_postcard_save"), ("decode_apply", "dw_postcard_load")):
        candidates = [s for s in shapes if mean.get((s, ours, 10000))]
        if candidates:
            chosen.append(min(candidates, key=lambda s: ratio(s, ours, dw)))
    chosen = list(dict.fromkeys(chosen))
    colours = ["#1b9e77", "#d95f02", "#7570b3"]
    figure, axes = plt.subplots(1, 2, figsize=(8.5, 3.6))
    for ax, (ours, dw, title) in zip(axes, (("capture", "dw_postcard_save", "Save: capture + encode"),
                                            ("decode_apply", "dw_postcard_load", "Load: decode + apply"))):
        for index, (s, colour) in enumerate(zip(chosen, colours)):
            x = [n for n in counts if mean.get((s, ours, n)) and mean.get((s, dw, n))]
            if not x:
                continue
            y_ours = [mean[(s, ours, n)] / 1e6 for n in x]
            y_dw = [mean[(s, dw, n)] / 1e6 for n in x]
            ax.plot(x, y_ours, marker="o", color=colour, label=f"bevy_keepsake, {s}")
            ax.plot(x, y_dw, marker="s", linestyle="--", color=colour, alpha=0.7,
                    label=f"DynamicWorld + postcard, {s}")
            for n, a, b in zip(x, y_ours, y_dw):
                # Between the two contenders' points, where the gap the ratio measures is.
                ax.annotate(f"{b / a:.1f}×", (n, (a * b) ** 0.5), textcoords="offset points",
                            xytext=(5 + 22 * index, -3), fontsize=7, color=colour)
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(counts, [f"{n // 1000}k" for n in counts])
        ax.set_xlabel("saved entities")
        ax.set_ylabel("ms (criterion mean)")
        ax.set_title(title, loc="left", fontsize=9)
    handles, labels = axes[0].get_legend_handles_labels()
    figure.legend(handles, labels, loc="lower center", ncol=2, fontsize=7, frameon=False,
                  bbox_to_anchor=(0.5, -0.12))
    figure.suptitle("Against DynamicWorld, same world, same run (DW / ours written between each pair of points)",
                    fontsize=10)
    figure.tight_layout()
    save_svg(plt, figure, "capture_load.svg")
    return ["capture_load.svg"]
# ---------------------------------------------------------------------------------------------
# The report.

def summary(targets):
    rows = []
    for t in targets:
        row, value = t.worst()
        verdict = {True: "met", False: "**missed**", None: "not measured"}[t.met()]
        rows.append([t.what, t.limit_text(), f"{t.show(value)} ({row})" if value is not None else "—",
                     verdict, when_short(t.source)])
    return table(["target", "limit", "worst figure", "verdict", "measured"], rows)


def when_short(name):
    path = LOGS / f"{name}.log"
    return f"{mtime(path):%Y-%m-%d %H:%M}" if path.exists() else "—"


def report(plots_drawn, path=None):
    est = estimates()
    frames = frame_data()
    data = shape_data(est)
    targets = []
    body = []
    body += frame_section(frames, targets)
    body += save_section(data, frames, targets)
    body += capture_load_section(data, targets)
    body += load_at_start_section(frames, targets)
    body += rewind_section(est, targets)
    body += store_section(est, targets)
    met = sum(1 for t in targets if t.met())
    missed = [t for t in targets if t.met() is False]
    out = ["# bevy_keepsake benchmarks\n",
           f"Generated by `scripts/bench_report.py` on {datetime.date.today()} from the runs named "
           "in each section (UTC). Machine: " + machine() + ". A shared 2-core VM: figures of one "
           "run are compared with each other (every target has its anchor measured in the same "
           "run), not with other machines.\n",
           "Every target is judged on its worst row: a world *shape* (below) and size. The "
           "targets are `DESIGN.md`'s and the issues' named.\n",
           f"## Targets: {met} met, {len(missed)} missed\n",
           summary(targets), "",
           ("Plots redrawn in this run: " + ", ".join(f"`docs/bench/{p}`" for p in plots_drawn) + "."
            if plots_drawn else "**Plots not redrawn in this run** (matplotlib missing or no data): "
            "the images in `docs/bench/` are from an earlier run."),
           ""]
    out += body
    out += ["## Not in this report\n",
            "- Cloud sync costs: `benches/cloud.rs` needs the `cloud` feature, not built for these "
            "runs (`cargo bench --features cloud --bench cloud`).",
            "- `DynamicWorld` + RON, postcard / LZ4 / CRC32 throughput, layouts, migrations, peak "
            "heap, scaling 1 KB–5 MB, concurrency: `cargo bench --bench snapshot|format|layouts|"
            "migration|memory|store`; criterion's report is in `target/criterion/report/`.",
            "- How each figure got where it is: `CHANGELOG.md` and `git log -- BENCHMARKS.md`.",
            "",
            "## Regenerate\n",
            "```sh",
            "export CARGO_TARGET_DIR=/path/to/target   # criterion data, logs and traces live there",
            "python3 scripts/bench_report.py --quick            # every run above (about 25 min here)",
            "python3 scripts/bench_report.py --only frame_time  # one run; the other tables keep theirs",
            "python3 scripts/bench_report.py --no-run           # report and plots from the data at hand",
            "```",
            "",
            "The plots need matplotlib (`python3 scripts/bench_report.py --help` says how to get it "
            "in a venv outside the repository); without it the report is written and the images "
            "are left as they are."]
    text = "\n".join(out) + "\n"
    text = re.sub(r"\n{3,}", "\n\n", text)
    path = path or ROOT / "BENCHMARKS.md"
    path.write_text(text)
    print(f"wrote {path} ({text.count(chr(10))} lines)")
    return text


def draw_plots():
    plt = matplotlib_pyplot()
    if plt is None:
        return []
    est = estimates()
    return draw_frame_traces(plt, frame_data()) + draw_capture_load(plt, shape_data(est))



# A ratio of two figures of one run that moves by less than this is not reported as moved.
NOISE = 0.10

UNITS = {"ns": 1, "µs": 1e3, "ms": 1e6, "s": 1e9, "B": 1, "×": 1}


def parse_figure(cell):
    """A table cell's time in ns, size in bytes or same-run ratio, with its kind; None for any
    other cell."""
    match = re.fullmatch(r"\*{0,2}([\d,]+(?:\.\d+)?) ?(ns|µs|ms|s|B|×)\*{0,2}", cell.strip())
    if not match:
        return None
    return float(match.group(1).replace(",", "")) * UNITS[match.group(2)], match.group(2)


def figures(markdown):
    """(section, row label, column) -> (cell text, value, unit) for every figure cell."""
    found, section, header = {}, "", None
    for line in markdown.splitlines():
        if line.startswith("#"):
            section, header = line.lstrip("# ").strip(), None
            continue
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
        elif not set("".join(cells)) <= set("-: "):
            for column, cell in zip(header[1:], cells[1:]):
                figure = parse_figure(cell)
                if figure:
                    found[(section, cells[0], column)] = (cell, *figure)
    return found


def moved_rows(before, after, ratios, label):
    rows = []
    for key, (new_cell, new, unit) in after.items():
        if key not in before or (unit == "×") != ratios:
            continue
        old_cell, old, _ = before[key]
        change = new / old - 1 if old else 0.0
        if abs(change) > NOISE:
            section, row, column = key
            rows.append([section, row, column, old_cell, new_cell, f"{change:+.0%}"])
    header = ["section", "row", "column", label, "now", "change"]
    return table(header, rows) if rows else "None moved by more than that."


def moved_section(before_text, after_text, label):
    before, after = figures(before_text), figures(after_text)
    machines = [re.search(r"^Machine: (.*)$", text, re.M) for text in (before_text, after_text)]
    machines = [m.group(1) if m else "not recorded" for m in machines]
    return "\n".join([
        f"## Against {label}\n",
        f"- {label}: {machines[0]}\n- now: {machines[1]}\n",
        f"Every figure above compared with the same cell of the earlier report "
        f"({len(before)} figures). The earlier run was made on another day, maybe on another "
        f"host: read the ratios first, which compare two contenders of one run and so cancel "
        f"the machine. The absolute figures follow; the engine-free ones (CRC32, postcard, LZ4, "
        f"file IO) show how far the machine alone moves a figure between the two runs.\n",
        f"### Same-run ratios that moved by more than {NOISE:.0%}\n",
        moved_rows(before, after, True, label) + "\n",
        f"### Absolute figures that moved by more than {NOISE:.0%}\n",
        moved_rows(before, after, False, label) + "\n",
    ])


# ---------------------------------------------------------------------------------------------
# --self-test: the report built from a few lines as the benches print them (no build, no run).

SAMPLE_LOGS = {
    "frame_time": """frame_time/real-game, 10000 entities, 120 frames at 60 FPS, autosave every 10 frames
  without autosave: p50 4.4 ms, p99 6.5 ms, 0 frames over 16.7 ms
  with autosave:    p50 4.5 ms, p99 6.9 ms, 0 frames over 16.7 ms (p99 ratio 1.06x)
  capture per save (12 saves): p50 0.3 ms, p99 0.4 ms on the main thread; latency p50 16.9 ms, p99 17.0 ms
  pool per save (10 runs, outside frames): p50 2.9 ms, p99 3.1 ms; full save's p50 3.4 ms, p99 4.8 ms
  F9 in session (3 loads, each after a quicksave and 10 frames of motion): apply p50 0.7 ms, p99 2.7 ms on the main thread; frames p50 6.4 ms, p99 14.2 ms, worst per load p50 9.3 ms, p99 14.2 ms, 0 frames over 16.7 ms; first save after it: capture p50 0.2 ms, p99 0.3 ms
  load at start (3 loads into an empty world): apply p50 14.2 ms, p99 17.6 ms on the main thread; worst frame p50 20.6 ms, p99 24.3 ms
  rewind held (60 steps, a point a frame before, motion paused): step apply p50 0.5 ms, p99 0.6 ms on the main thread; frames p50 6.1 ms, p99 7.4 ms, 0 frames over 16.7 ms; 60 landed in the frame asked, the latest 0 frames late, 0 refused; points' capture p50 0.4 ms, p99 0.5 ms
frame_time/real-game, 100000 entities, 120 frames at 60 FPS, autosave every 10 frames
  without autosave: p50 4.5 ms, p99 12.0 ms, 0 frames over 16.7 ms
  with autosave:    p50 5.3 ms, p99 10.4 ms, 2 frames over 16.7 ms (p99 ratio 0.87x)
  capture per save (12 saves): p50 1.3 ms, p99 2.5 ms on the main thread; latency p50 16.9 ms, p99 50.5 ms
""",
    "shapes_capture_load": """shapes size, real-game, 1000 entities: keepsake blob 1000 bytes, DynamicWorld postcard 3100 bytes
shapes size, real-game, 10000 entities: keepsake blob 10000 bytes, DynamicWorld postcard 29000 bytes
shapes size, real-game, 100000 entities: keepsake blob 100000 bytes, DynamicWorld postcard 310000 bytes
shapes part, real-game, 100000 entities, main_10pct: p50 1.200 ms, p99 1.500 ms (40 runs)
""",
    "rewind": """rewind memory, real-game, 10000 entities: 60 points 1 % apart hold 2 bytes (1.80x one blob of 1 bytes); keeping them added 1 bytes to the heap (0.41x)
rewind part, real-game, 10000 entities, step_newest_1pct: p50 0.400 ms, p99 0.700 ms (100 runs)
rewind part, real-game, 10000 entities, point_1pct: p50 0.076 ms, p99 0.169 ms (100 runs)
""",
}
SAMPLE_MEANS = {  # ns
    "shapes_real-game/capture/1000": 0.5e6, "shapes_real-game/capture/10000": 5e6,
    "shapes_real-game/capture/100000": 60e6, "shapes_real-game/dw_postcard_save/10000": 45e6,
    "shapes_real-game/decode_apply/10000": 25e6, "shapes_real-game/dw_postcard_load/10000": 125e6,
    "save_load/full_save/1MB": 2e6, "save_load/baseline_durable_write/1MB": 1.5e6,
    "save_load/full_load/1MB": 0.1e6, "save_load/baseline_fs_read/1MB": 0.05e6,
}
SAMPLE_EXPECTED = [
    "| Frames over 16.7 ms added by autosaves (10k, 100k) | ≤ 0 | 2 (`real-game` 100k) | **missed** |",
    "| Frame p99 with autosave / without | ≤ 1.1× | 1.06× (`real-game` 10k) | met |",
    "`real-game` | 100k †",
    "| Full capture at 10k, `DynamicWorld` + postcard / ours | ≥ 8× | 9.00× (`real-game` 10k) | met |",
    "| Size, `DynamicWorld` postcard / ecs_blob (before compression) | ≥ 3× | 2.90× (`real-game` 10k) | **missed** |",
    "| Capture time 100k / 1k (linear) | ≤ 105× | 120.00× (`real-game`) | **missed** |",
    "| Main-thread part of a save, 100k, 10 % changed, p99 | ≤ 1 ms | 1.50 ms (`real-game`) | **missed** |",
    "| Rewind step to the newest point, 10k, 1 % changed: main thread p99 | ≤ 1 ms | 700 µs (`real-game`) | met |",
    "| Save 1 MB, ours / bare durable write | ≤ 1.5× | 1.33× (`1MB`) | met |",
    "## Load at start\n\nNot measured",
]


def self_test():
    """Builds the report from SAMPLE_LOGS and SAMPLE_MEANS in a temporary folder and checks the
    verdicts a reader would see; exits non-zero on the first that differs."""
    import tempfile
    global LOGS, CRITERION, TRACES
    with tempfile.TemporaryDirectory() as tmp:
        LOGS, CRITERION, TRACES = Path(tmp, "logs"), Path(tmp, "criterion"), Path(tmp, "traces")
        LOGS.mkdir()
        for name, text in SAMPLE_LOGS.items():
            (LOGS / f"{name}.log").write_text(text)
        (LOGS / "store_targets.log").write_text("")
        for bench_id, ns in SAMPLE_MEANS.items():
            folder = CRITERION / bench_id / "new"
            folder.mkdir(parents=True)
            (folder / "estimates.json").write_text(json.dumps({"mean": {"point_estimate": ns}}))
        text = report([], Path(tmp, "BENCHMARKS.md"))
    missing = [line for line in SAMPLE_EXPECTED if line not in text]
    if missing:
        sys.exit("self-test: the report lacks:\n" + "\n".join(missing))
    print(f"self-test: {len(SAMPLE_EXPECTED)} verdicts as expected")


def main():
    if "--help" in sys.argv or "-h" in sys.argv:
        print(__doc__)
        return
    if "--self-test" in sys.argv:
        self_test()
        return
    quick = "--quick" in sys.argv
    names = sys.argv[sys.argv.index("--only") + 1].split(",") if "--only" in sys.argv else FULL_RUN
    unknown = [n for n in names if n not in RUNS]
    if unknown:
        sys.exit(f"--only knows {', '.join(RUNS)} (not {', '.join(unknown)})")
    if "--no-run" not in sys.argv:
        failed = run_benches(quick, names)
        if failed:
            print("these runs failed (their tables keep any earlier data): " + ", ".join(failed))
    report(draw_plots())
    if "--before" in sys.argv:
        before = Path(sys.argv[sys.argv.index("--before") + 1]).read_text()
        label = sys.argv[sys.argv.index("--label") + 1] if "--label" in sys.argv else "before"
        path = ROOT / "BENCHMARKS.md"
        path.write_text(path.read_text() + "\n" + moved_section(before, path.read_text(), label))


if __name__ == "__main__":
    main()
