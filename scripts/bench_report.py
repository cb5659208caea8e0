#!/usr/bin/env python3
"""Runs the benchmarks and writes BENCHMARKS.md from criterion's output.

Usage: python3 scripts/bench_report.py [--quick] [--no-run] [--before OLD.md --label TEXT]

  --quick   KEEPSAKE_BENCH_QUICK=1 and short criterion runs (a smoke run, not for publishing)
  --no-run  only rebuild the report from the last run's logs and criterion data
  --only layouts|shapes|frame_time|load_at_start
            run only that section's benches and rewrite only that section of BENCHMARKS.md in
            place (it says when it was measured); the other sections keep their figures
  --before  an earlier BENCHMARKS.md (for example `git show REV:BENCHMARKS.md > old.md`): the
            report ends with every ratio and figure that moved by more than NOISE against it,
            both shown; --label names the earlier run in that section's title

Criterion's estimates are read from <target>/criterion/**/new/estimates.json (mean); the
harness-less benches (frame_time, memory) and the size lines are read from the logs kept in
<target>/bench-logs/. Nothing in BENCHMARKS.md is typed by hand except the reference report's
figures, which are quoted from ../shared/reference/aw-save-benchmarks.md.
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
BENCHES = ["snapshot", "layouts", "shapes", "frame_time", "format", "store", "migration", "memory"]

# The reference report's figures (aw-save, Windows 10 desktop with an NVMe SSD, repeated-byte
# data), in nanoseconds.
US, MS = 1e3, 1e6
REFERENCE = {
    "serialization/serialize/10KB": 11.1 * US,
    "serialization/serialize/100KB": 104 * US,
    "serialization/serialize/1MB": 1.13 * MS,
    "serialization/deserialize/10KB": 20.8 * US,
    "serialization/deserialize/1MB": 2.82 * MS,
    "compression/lz4_compress_repeated_byte/10KB": 1.88 * US,
    "compression/lz4_compress_repeated_byte/100KB": 8.78 * US,
    "compression/lz4_compress_repeated_byte/1MB": 88.5 * US,
    "compression/lz4_decompress_repeated_byte/10KB": 6.08 * US,
    "compression/lz4_decompress_repeated_byte/1MB": 937 * US,
    "checksum/crc32/10KB": 0.543 * US,
    "checksum/crc32/100KB": 4.09 * US,
    "checksum/crc32/1MB": 46.0 * US,
    "save_load/full_save/10KB": 4.08 * MS,
    "save_load/full_save/100KB": 3.60 * MS,
    "save_load/full_save/1MB": 5.47 * MS,
    "save_load/full_load/10KB": 238 * US,
    "save_load/full_load/1MB": 3.81 * MS,
    "save_load/round_trip/100KB": 3.95 * MS,
    "listing/list_saves/0": 60.7 * US,
    "listing/list_saves/10": 112 * US,
    "listing/list_saves/100": 215 * US,
    "scaling/save/1KB": 4.19 * MS,
    "scaling/save/10KB": 5.39 * MS,
    "scaling/save/100KB": 3.69 * MS,
    "scaling/save/500KB": 3.87 * MS,
    "scaling/save/1MB": 4.80 * MS,
    "scaling/save/5MB": 16.1 * MS,
    "scaling/load/1KB": 166 * US,
    "scaling/load/10KB": 224 * US,
    "scaling/load/100KB": 433 * US,
    "scaling/load/500KB": 1.76 * MS,
    "scaling/load/1MB": 3.80 * MS,
    "scaling/load/5MB": 18.6 * MS,
}


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


def run_benches(quick, benches):
    LOGS.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    extra = []
    if quick:
        env["KEEPSAKE_BENCH_QUICK"] = "1"
        extra = ["--", "--warm-up-time", "1", "--measurement-time", "2"]
    for bench in benches:
        harness_args = extra if bench not in ("frame_time", "memory") else []
        print(f"== cargo bench --bench {bench}", flush=True)
        with open(LOGS / f"{bench}.log", "w") as log:
            subprocess.run(
                ["cargo", "bench", *older_rust_flags(), "--bench", bench, *harness_args],
                cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, check=True,
            )


def run_load_at_start():
    """The shapes bench's load-at-start pair alone, at 100k, into its own log."""
    LOGS.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, KEEPSAKE_BENCH_COUNTS="100000")
    filters = ["--", "apply_at_start|dw_apply", "--warm-up-time", "1", "--measurement-time", "3"]
    print("== cargo bench --bench shapes -- 'apply_at_start|dw_apply'", flush=True)
    with open(LOGS / "shapes_load_at_start.log", "w") as log:
        subprocess.run(
            ["cargo", "bench", *older_rust_flags(), "--bench", "shapes", *filters],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, check=True,
        )


def estimates():
    """benchmark id ("group/function/param") -> mean time in ns."""
    found = {}
    for path in CRITERION.glob("**/new/estimates.json"):
        bench_id = str(path.parent.parent.relative_to(CRITERION))
        with open(path) as f:
            found[bench_id] = json.load(f)["mean"]["point_estimate"]
    return found


def fmt_time(ns):
    if ns is None:
        return "—"
    if ns >= 1e9:
        return f"{ns / 1e9:.2f} s"
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns:.0f} ns"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return "—"
    return f"{a / b:.2f}×"


# Why the snapshot targets that are missed are missed (from the profiles named; see the
# `snapshot` module docs). Printed under the targets whatever this run's verdicts are.
MISSES_WHY = """Where the time goes (`perf record -e cpu-clock` on the bench binary):

- *Capture against DW + RON (10k)*: a reflection-only value is written by walking its plan over
  `reflect_ref()`, one `Any` downcast per leaf: `reflect_plan::write_leaf` is 19 % of the samples
  and `Plan::write` 9.5 %, against 4 % for the sink's entity lookup and 4 % for postcard's
  buffer. The same types through serde capture in about half the time (the *plans / serde* table
  below), and 4.0 ms would be 42× DW + RON. Closing the gap means writing plan leaves from field
  offsets instead of downcasts (unsafe, per-type code), which was not built.
- *Decode + apply against DW + RON (10k)*: a reflection-only value is decoded over a clone of a
  kept value of its type; the rest is one box per value and the archetype move of each entity
  (`insert_by_ids`, `Tables::move_row`, 17 % of a load), plus the commands Bevy's `ChildOf` hook
  queues for each parent's first child (6 %). Enums that change variant, maps and sets used to
  be rebuilt from dynamic values on every row (`Plan::read` 13.5 %, `take_from_reflect` 4.7 %):
  they are now read over kept values too (no quiet before/after figure was taken; the earlier
  busy-machine run had decode + apply at 3.85× DW + postcard, this one 4.70×).
- *Capture scaling to 100k*: per entity the 100k world costs more than the 1k one because its
  working set no longer fits the caches (the entity-index map that remaps references, and the
  column buffers). Load scaling met its target once decode stopped regrouping every value by
  entity (apply now merges the sorted columns), which was the step that grew fastest
  (`ColumnsDecoder::finish` 1.5 % of a load at 1k, 3.7 % at 100k).
- *Reflection-only capture of the first bench world against its serde path*: not reachable with
  the same bytes. Those types reflect `Serialize`, so their bytes are defined by serde and a
  reflection plan must not write them (plans only take types without serde); the reflection-only
  registration goes through Bevy's reflected serializer.
"""


def verdict(value, target, at_least=True):
    """`value` (a ratio) against `target`: met, or missed by how much, in words for the report."""
    if value is None:
        return "not measured"
    sign = "≥" if at_least else "≤"
    met = value >= target if at_least else value <= target
    if met:
        return f"{value:.2f}× (target {sign} {target}×: met)"
    short = (target / value - 1) if at_least else (value / target - 1)
    return f"{value:.2f}× (target {sign} {target}×: **missed by {short * 100:.0f} %**)"


def quotient(a, b):
    return None if a is None or b is None or b == 0 else a / b


def log_text(bench):
    path = LOGS / f"{bench}.log"
    return path.read_text() if path.exists() else ""


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


def result_lines(log, name):
    """The lines a harness-less bench printed: its title line and the indented lines after it."""
    lines = log.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith(name + "/")]
    if not starts:
        return []
    picked = [lines[starts[0]]]
    for line in lines[starts[0] + 1:]:
        if not line.startswith("  "):
            break
        picked.append(line)
    return picked


def frame_time_lines(log):
    """Every block the frame_time bench printed, one per scenario."""
    lines = log.splitlines()
    picked = []
    for i, line in enumerate(lines):
        if line.startswith("frame_time/"):
            picked += result_lines("\n".join(lines[i:]), "frame_time")
    return picked


LAYOUTS_TITLE = "## Layouts in every save: what they cost, per world\n"
LAYOUT_WORLDS = {
    "game-serde": "game world, serde types",
    "game-reflect": "game world, reflection only",
    "real-game": "real-game world",
    "real-game-serde": "real-game world, all serde",
    "many-small": "16 small reflection-only types per entity",
}


def layouts_section(get):
    """The layouts' bytes in each benchmark world's blob, and loads with and without them."""
    log = log_text("layouts")
    sizes = re.findall(r"layouts size, (\S+), (\d+) entities: blob (\d+) bytes, layouts (\d+) bytes", log)
    if not sizes:
        return []
    paired = {(label, int(count)): f"{median} ({low}–{high})" for label, count, median, low, high in re.findall(
        r"layouts paired, (\S+), (\d+) entities: ratio median ([\d.]+) \(quartiles ([\d.]+) to ([\d.]+)\)", log)}
    out = [LAYOUTS_TITLE,
           f"Measured {datetime.date.today()} (`cargo bench --bench layouts`). Each column of a blob "
           "carries its type's layout once (blob layout version 2). *decode* reads a blob whose "
           "layouts equal today's (each column's are compared, then read by the fast plan); "
           "*without layouts* is the same blob rewritten as version 1, read as before layouts. "
           "The capture copies each type's encoded layout, built once per registered type. Criterion's "
           "separate runs move by ±20 % on this shared machine, so the ratio is taken from loads "
           "timed in pairs, back to back (median, and quartiles in brackets).\n"]
    rows = []
    for world, count, blob, layouts in sizes:
        prefix = f"layouts/{world}"
        with_layouts, without = get(f"{prefix}_decode/{count}"), get(f"{prefix}_decode_v1/{count}")
        rows.append([LAYOUT_WORLDS.get(world, world), count, f"{int(blob):,} B", f"{int(layouts):,} B",
                     f"{100 * int(layouts) / int(blob):.2f} %", fmt_time(with_layouts),
                     fmt_time(without), paired.get((world, int(count)), "—")])
    out.append(table(["world", "entities", "blob", "layouts", "share", "decode", "without layouts",
                      "with / without (paired)"], rows))
    out.append("")
    rows = []
    for count in sorted({int(count) for _, count, _, _ in sizes}):
        same, resolved = get(f"layouts/heroes_decode_same/{count}"), get(f"layouts/heroes_decode_resolved/{count}")
        if same and resolved:
            rows.append([count, fmt_time(same), fmt_time(resolved), paired.get(("heroes", count), "—")])
    if rows:
        out.append("A load whose layout changed: one reflection-only component (five fields, one an "
                   "enum with a `Vec<String>`) saved with one layout and loaded with another (fields "
                   "reordered, one widened, one added with a default, the enum's variants reordered), "
                   "read through the resolved plan, against the same blob loaded by the type that "
                   "saved it:\n")
        out.append(table(["entities", "same layout", "resolved", "resolved / same (paired)"], rows))
        out.append("")
    return out


# ---------------------------------------------------------------------------------------------
# Issue 24: the family of world shapes (`benches/shapes.rs`) and the game-like frame bench
# (`benches/frame_time.rs`). Every target is judged on the worst shape.

# Why the issue-24 targets that are missed are missed (profiles named). Printed under each table.
SHAPES_WHY = """Why the misses (from the code paths the benchmarks time, and the profiles named):

- *Main thread, 10 % changed (≤ 1 ms p99 at 100k)*: what is left is the changed values
  themselves. The entity table, the hierarchy and every unchanged chunk are kept between
  captures; the O(world) part (each table's change ticks and entities) is about 0.5 ms. The
  10 % are re-encoded, spread over the compute pool with the main thread helping
  (`capture/encode.rs`). On `strings-maps` that is 10k maps of 8–15 strings: a profile
  (`perf record --call-graph dwarf` on `main_10pct`, 100k) put two fifths of it in copying the
  keys' text, each an allocation of its own read from memory, then the plan's leaf writes
  (a quarter) and the map's reflected iterator (a tenth). Asking for a batch of texts ahead
  (`plan.rs`, `write_items`) took about a tenth off. The *copy* column is the copy alone of the
  design that copies the changed values and encodes them on the pool: on `strings-maps`,
  cloning the changed maps through their own `Clone` on one thread costs more than the whole
  capture, because it reads the same text and allocates it again. On `large` (10k `Vec`s of 96
  `u16`, postcard varints) a clone would be several times cheaper than encoding, but a plugin
  cannot clone a registered type it has no `Clone` bound for: Bevy's component clone functions
  need the `ComponentCloneCtx` only its `EntityCloner` makes, `reflect_clone` boxes every item
  of a `Vec`, and `FromReflect` converts item by item through reflection.
- *Pool, 1 % changed (≤ 1/10 of a full save)*: a save joins and hashes only the capture chunks
  that changed and copies the others (the file is cut at the capture's pieces). What is left:
  two XXH3 passes over the whole blob (its state hash, and the check that the pieces were made
  for it), the copy of the unchanged chunks into the new blob, and the changed chunks: a 1 %
  change spread over the world touches every 1024-row chunk of the moving column. On `large`
  every capture chunk holds a changed row, and the fresh 58 MB blob's page faults are a fifth
  of its pool part. On `many-small` (11.5 MB blob, whose full save is cheap for its size) the
  1 % part is about what the two hashes and the one copy of the blob cost together.
- *Full capture and decode + apply against `DynamicWorld` + postcard*: the worst shape is
  `handles`. A type that holds an asset handle has no reflection plan: it is written and read
  by Bevy's reflection serializer and deserializer with the handle processors (the processor
  writes a handle's path from its borrowed `AssetPath`; the load's profile is reflection's
  dynamic values and their allocations, `malloc`/`free` about a fifth). A plan that writes and
  reads handles as leaves (plan, plan reader, layout) was not built. Elsewhere a capture is
  6.9–17× (`deep` below 8×: its hierarchy order is not spread), and a load pays one box per
  value, the archetype move of each entity and the commands Bevy's `ChildOf` hook queues (the
  `deep` world, 62 of 63 entities children). Per entity the 100k worlds cost more than the 10k
  ones (working sets beyond the caches).
"""

FRAME_WHY = """Why the frame misses: the autosave's main-thread part (*capture*, 10 % changed) lands
inside one frame. At 100k it is 2.6–3.5 ms p99 on six shapes, 6.7 ms on `large` and 9.7 ms on
`strings-maps` (the snapshot section says what is left in it and why). One frame in ten holds a
save, so the p99 of the frames with autosave is a save frame: the busy systems (5–7 ms) plus
the capture, 1.3–1.9× the p99 without at 100k on every shape. The 1.10× target needs the
capture under about 0.7 ms at 100k, under the 1 ms target of the main thread's part. Frames
over 16.7 ms come from `strings-maps`, whose save frames are 5–6 ms of systems plus 7–10 ms of
capture: in this run 6 of 600 frames, in the runs before the text read-ahead 19–28 (more than
the read-ahead's tenth explains, so part of that difference is this machine's noise). `large`
and `many-small` added 1–2 with captures of 3.5–6.7 ms p99: a save frame on which other work
landed.

The pool's part (join, hash, encode, durable write: see the snapshot section) runs on a thread
whose priority is below the game's (`SCHED_IDLE` here), so it takes only cores the frame
leaves idle; it still shares the memory bus and the caches with the frame. Frames *without*
autosave have a p50 near 5 ms rather than 3 ms: the two 3 ms systems run on both compute
threads but overlap only part of the time on this 2-core VM (a thread trace showed them often
starting about 2 ms apart).

Read with care: this machine is shared. A run whose frames *without* autosave reach a p99 well
above 8 ms was disturbed by other work; its ratio understates the autosave's cost (a ratio
below 1× says nothing). A few frames over 16.7 ms on a shape whose capture is 3 ms p99 are
that noise. At 100k on `large` (58 MB blob) the pool part takes most of the 10 frames between
saves, so a save's latency is about 150 ms.
"""

SHAPES_TITLE = "## World shapes: snapshot targets on every shape (issue 24)\n"
FRAME_TITLE = "## Frame time like a game, on every shape (issue 24)\n"

SHAPES = {
    "real-game": "squads → 3 units → 2 equipment; entity references, enums, maps; mostly "
                 "reflection-only (`tests/it/common/real_world.rs`)",
    "tried": "the world issue 24 was found on: 90 % in squads → 4 units → 1 item, strings, "
             "`HashMap<String, u32>`, `Option`, enums with `Vec` data, serde and reflection-only "
             "types mixed",
    "deep": "binary trees six levels deep: 62 of 63 entities are children (hierarchy order, "
            "`ChildOf` on load)",
    "strings-maps": "strings, `Vec<String>` and a `HashMap<String, u32>` of 8–15 entries on every "
                    "entity (per-byte and per-entry costs)",
    "many-small": "16 small reflection-only components per entity (per-value and per-column costs)",
    "large": "two large components per entity, `Vec`s of 48 `Vec2` and 96 `u16` (bulk bytes: "
             "join, hash, compression)",
    "reflect-only": "no type has serde: plans for structs, enums with data, strings, options, "
                    "nested `Vec`s; a two-level hierarchy",
    "handles": "sprites: every entity a serde `Transform` and a reflection-only sprite-like value "
               "with an asset handle loaded by path, one in four an untyped handle too",
}

PART = r"shapes part, (\S+), (\d+) entities, (\w+): p50 ([\d.]+) ms, p99 ([\d.]+) ms"


def worst(values, at_least):
    """(shape, value) of the worst shape: the smallest value when the target is a minimum."""
    found = [(shape, v) for shape, v in values.items() if v is not None]
    if not found:
        return None, None
    return (min if at_least else max)(found, key=lambda item: item[1])


def target_line(label, values, target, at_least, unit="×"):
    """One target judged on the worst shape, with every shape's figure after it."""
    shape, value = worst(values, at_least)
    if shape is None:
        return f"- {label}: not measured"
    sign = "≥" if at_least else "≤"
    met = value >= target if at_least else value <= target
    show = {"×": lambda v: f"{v:.2f}×", "ms": lambda v: f"{v:.3f} ms",
            "frames": lambda v: f"{v:.0f} frames"}[unit]
    if met:
        judged = f"**met** ({show(value)} on `{shape}`, target {sign} {show(target)})"
    elif target == 0:
        judged = f"**missed** on `{shape}`: {show(value)} for {sign} {show(target)}"
    elif at_least:
        judged = (f"**missed** on `{shape}`: {show(value)} for {sign} {show(target)} "
                  f"({(1 - value / target) * 100:.0f} % short)")
    else:
        judged = (f"**missed** on `{shape}`: {show(value)} for {sign} {show(target)} "
                  f"({value / target:.1f}× the limit)")
    each = ", ".join(f"{s} {show(v)}" for s, v in values.items() if v is not None)
    return f"- {label}: {judged}. Every shape: {each}."


def shapes_section(get, quick):
    log = log_text("shapes")
    sizes = list(dict.fromkeys(re.findall(
        r"shapes size, (\S+), (\d+) entities: keepsake blob (\d+) bytes, DynamicWorld postcard (\d+) bytes", log)))
    if not sizes:
        return []
    parts = {(s, int(n), name): (float(p50), float(p99)) for s, n, name, p50, p99 in re.findall(PART, log)}
    failed = sorted(set(re.findall(r"shapes round trip FAILED: (\S+), (\w+), (\d+)", log)))
    shapes = list(dict.fromkeys(s for s, _, _, _ in sizes))
    counts = sorted({int(n) for _, n, _, _ in sizes})
    out = [SHAPES_TITLE,
           f"Measured {datetime.date.today()} (`cargo bench --bench shapes`"
           f"{', quick criterion settings: 1 s warm-up, 2 s measurement, 10 samples' if quick else ''}). "
           "Criterion means unless marked p50 / p99 (taken over every timed iteration of the same "
           "benchmark). Shapes (`benches/common/shapes.rs`, one builder for every bench):\n"]
    out += [f"- `{s}`: {SHAPES.get(s, '')}" for s in shapes]
    out.append("")
    out.append("Full capture + encode and decode + apply, against `DynamicWorld` + postcard in the "
               "same run (loads into a fresh app; every contender's load was checked to hold the "
               "saved entities and `ChildOf` links"
               + (": **round trip failed** for " + ", ".join(f"{s} {c} at {n}" for s, c, n in failed)
                  if failed else "") + "):\n")
    rows = []
    ratios = {}
    for s, n, blob, dw in sizes:
        p = f"shapes_{s}"
        cap, dws = get(f"{p}/capture/{n}"), get(f"{p}/dw_postcard_save/{n}")
        load, dwl = get(f"{p}/decode_apply/{n}"), get(f"{p}/dw_postcard_load/{n}")
        ratios[(s, int(n))] = (quotient(dws, cap), quotient(dwl, load))
        rows.append([f"`{s}`", n, fmt_time(cap), fmt_time(dws), ratio(dws, cap), fmt_time(load),
                     fmt_time(dwl), ratio(dwl, load), f"{int(blob):,} B", f"{int(dw) / int(blob):.2f}×"])
    out.append(table(["shape", "entities", "capture", "DW + postcard save", "DW / ours",
                      "decode + apply", "DW + postcard load", "DW / ours", "ecs_blob",
                      "DW postcard / blob"], rows))
    out.append("")
    out.append("The main thread's part of a save (`CaptureCache::capture`) after 10 % and 1 % of "
               "the entities changed since the last capture (every 10th / 100th entity in spawn "
               "order: spread over every table and chunk, as moving units are), and the pool's "
               "part (`PendingSnapshot::finish` + `format::encode` through the profile's chunk "
               "cache; the durable write not included) after 1 % changed, against a full save's "
               "pool part. *Copy of the changed values* is what the design that copies changed "
               "values on the main thread and encodes them on the pool would pay for the copy "
               "alone: the changed component of each of the 10 % looked up and cloned through "
               "its type's own `Clone`, on the main thread alone (no reflection, no encoding):\n")
    rows = []
    incremental = {}
    for s in shapes:
        for n in counts:
            p = f"shapes_{s}"
            m10, m1 = get(f"{p}/main_10pct/{n}"), get(f"{p}/main_1pct/{n}")
            pool1, full = get(f"{p}/pool_1pct/{n}"), get(f"{p}/pool_full/{n}")
            if m10 is None:
                continue
            q = lambda name: parts.get((s, n, name))
            pair = lambda name: f"{q(name)[0]:.3f} / {q(name)[1]:.3f} ms" if q(name) else "—"
            incremental[(s, n)] = (q("main_10pct")[1] if q("main_10pct") else None,
                                   quotient(full, pool1))
            rows.append([f"`{s}`", n, fmt_time(m10), pair("main_10pct"), pair("copy_10pct"),
                         fmt_time(m1), pair("main_1pct"), fmt_time(pool1), fmt_time(full),
                         ratio(pool1, full)])
    out.append(table(["shape", "entities", "main, 10 % changed", "p50 / p99",
                      "copy of the changed values, p50 / p99", "main, 1 % changed", "p50 / p99",
                      "pool, 1 % changed", "pool, full save", "1 % / full (target ≤ 0.10×)"], rows))
    out.append("")
    out.append("Targets (issue 24 and `DESIGN.md`), each judged on the worst shape:\n")
    for n in (10000, 100000):
        if any(k[1] == n for k in ratios):
            at = {s: ratios.get((s, n), (None, None)) for s in shapes}
            out.append(target_line(f"full capture at {n // 1000}k, DW + postcard / ours",
                                   {s: v[0] for s, v in at.items()}, 8, True))
            out.append(target_line(f"decode + apply at {n // 1000}k, DW + postcard / ours",
                                   {s: v[1] for s, v in at.items()}, 4, True))
    if any(k[1] == 100000 for k in incremental):
        at = {s: incremental.get((s, 100000), (None, None)) for s in shapes}
        out.append(target_line("main-thread part of a save at 100k, 10 % changed, p99",
                               {s: v[0] for s, v in at.items()}, 1.0, False, unit="ms"))
        out.append(target_line("pool work per save at 100k, full save / 1 % changed",
                               {s: v[1] for s, v in at.items()}, 10, True))
    out.append("")
    out.append(SHAPES_WHY)
    return out


FRAME_NUMBERS = {
    "without": r"without autosave: p50 ([\d.]+) ms, p99 ([\d.]+) ms, (\d+) frames over",
    "with": r"with autosave: +p50 ([\d.]+) ms, p99 ([\d.]+) ms, (\d+) frames over",
    "capture": r"capture per save \((\d+) saves\): p50 ([\d.]+) ms, p99 ([\d.]+) ms on the main "
               r"thread; latency p50 ([\d.]+) ms, p99 ([\d.]+) ms",
    "pool": r"pool per save \(\d+ runs, outside frames\): p50 ([\d.]+) ms, p99 ([\d.]+) ms; full "
            r"save's p50 ([\d.]+) ms, p99 ([\d.]+) ms",
}


PLAY_NUMBERS = {
    "f9": r"F9 in session \((\d+) loads.*?apply p50 ([\d.]+) ms, p99 ([\d.]+) ms on the main thread; "
          r"frames p50 [\d.]+ ms, p99 ([\d.]+) ms, worst per load p50 [\d.]+ ms, p99 ([\d.]+) ms, "
          r"(\d+) frames over 16.7 ms; first save after it: capture p50 [\d.]+ ms, p99 ([\d.]+) ms",
    "start": r"load at start \((\d+) loads into an empty world\): apply p50 ([\d.]+) ms, p99 "
             r"([\d.]+) ms on the main thread; worst frame p50 [\d.]+ ms, p99 ([\d.]+) ms",
    "held": r"rewind held \((\d+) steps.*?step apply p50 ([\d.]+) ms, p99 ([\d.]+) ms on the main "
            r"thread; frames p50 [\d.]+ ms, p99 ([\d.]+) ms, (\d+) frames over 16.7 ms; (\d+) "
            r"landed in the frame asked, the latest (\d+) frames late, (\d+) refused",
}


def play_section(blocks):
    """Issue 42: what a player does besides saving (an F9 in the session, a load at start, a
    held rewind), per shape and size, and the targets judged on the worst shape."""
    rows, f9, start, held_over, held_late, first_save = [], {}, {}, {}, {}, {}
    for block in blocks:
        head = re.match(r"frame_time/(\S+), (\d+) entities", block)
        s, n = head.group(1), int(head.group(2))
        f = {key: re.search(pattern, block, flags=re.S) for key, pattern in PLAY_NUMBERS.items()}
        if not all(f.values()):
            continue
        a, b, h = f["f9"], f["start"], f["held"]
        f9.setdefault(n, {})[s] = float(a.group(3))
        first_save.setdefault(n, {})[s] = float(a.group(7))
        start.setdefault(n, {})[s] = float(b.group(3))
        held_over.setdefault(n, {})[s] = float(h.group(5))
        held_late.setdefault(n, {})[s] = float(h.group(7))
        rows.append([f"`{s}`", n, f"{a.group(2)} / {a.group(3)} ms", f"{a.group(5)} ms", a.group(6),
                     f"{a.group(7)} ms", f"{b.group(2)} / {b.group(3)} ms", f"{b.group(4)} ms",
                     f"{h.group(2)} / {h.group(3)} ms", h.group(5),
                     f"{h.group(6)} of {h.group(1)}, latest {h.group(7)} late"])
    if not rows:
        return []
    out = ["### Loads and rewinds in the game (issue 42)\n",
           "The same game: *F9 in session* is a quicksave, 10 frames of motion and a quickload "
           "(in place), repeated; *load at start* loads that save into an empty world (every "
           "entity spawned); *rewind held* takes a point a frame, then steps back one point a "
           "frame with motion paused. Apply times are the main thread's part "
           "(`LoadCompleted::apply_time`, `RewindCompleted::apply_time`).\n",
           table(["shape", "entities", "F9 apply p50 / p99", "F9 worst frame p99",
                  "F9 frames over 16.7 ms", "first save after F9, capture p99",
                  "load at start p50 / p99", "its worst frame p99", "rewind step p50 / p99",
                  "held-rewind frames over 16.7 ms", "steps in the frame asked"], rows),
           "",
           "Targets (issue 42), each judged on the worst shape:\n"]
    if 10000 in held_over:
        out.append(target_line("holding rewind, 10k: frames over 16.7 ms", held_over[10000], 0,
                               False, unit="frames"))
        out.append(target_line("holding rewind, 10k: frames from request to restored",
                               held_late[10000], 1, False, unit="frames"))
    if 100000 in f9:
        out.append(target_line("in-session F9 at 100k, main thread p99", f9[100000], 16.7, False,
                               unit="ms"))
        out.append(target_line("first save after an F9 at 100k, capture p99",
                               first_save[100000], 1.0, False, unit="ms"))
        out.append(target_line("load at start at 100k, main thread p99", start[100000], 100.0,
                               False, unit="ms"))
    out.append("")
    return out


LOAD_AT_START_TITLE = "## Load at start against `DynamicWorld` (issue 42)\n"


def load_at_start_section():
    """Issue 42's load at start: our apply of a decoded save into a world with no saved entity
    against `DynamicWorld::write_to_world` of the same world, per shape at 100k, from the
    `shapes part` lines `benches/shapes.rs` prints (see `run_load_at_start`)."""
    log = log_text("shapes_load_at_start")
    found = {}
    pattern = (r"shapes part, (\S+), (\d+) entities, (apply_at_start|dw_apply): p50 ([\d.]+) ms, "
               r"p99 ([\d.]+) ms \((\d+) runs\)")
    for shape, n, name, p50, p99, runs in re.findall(pattern, log):
        found.setdefault((shape, int(n)), {})[name] = (float(p50), float(p99), runs)
    rows, ratio, p99s = [], {}, {}
    for (shape, n), got in found.items():
        if "apply_at_start" not in got or "dw_apply" not in got:
            continue
        ours, theirs = got["apply_at_start"], got["dw_apply"]
        ratio.setdefault(n, {})[shape] = theirs[0] / ours[0]
        p99s.setdefault(n, {})[shape] = ours[1]
        rows.append([f"`{shape}`", n, f"{ours[0]:.1f} / {ours[1]:.1f} ms ({ours[2]} runs)",
                     f"{theirs[0]:.1f} / {theirs[1]:.1f} ms ({theirs[2]} runs)",
                     f"{theirs[0] / ours[0]:.2f}×"])
    if not rows:
        return []
    out = [LOAD_AT_START_TITLE,
           f"Measured {datetime.date.today()} (`cargo bench --bench shapes -- "
           "'apply_at_start|dw_apply'`, `KEEPSAKE_BENCH_COUNTS=100000`, 1 s warm-up, 3 s "
           "measurement). The main thread's part of a load into a world with the shape's types "
           "registered and no entity: `snapshot::apply` of the decoded save (every entity "
           "spawned), against `DynamicWorld::write_to_world` of the same world deserialized from "
           "postcard; decoding and deserializing are not timed. p50 / p99 over every timed "
           "iteration.\n",
           table(["shape", "entities", "ours p50 / p99", "`DynamicWorld` p50 / p99",
                  "`DynamicWorld` / ours (p50)"], rows),
           "",
           "Targets (issue 42), each judged on the worst shape:\n"]
    for n in sorted(ratio):
        out.append(target_line(f"load at start at {n // 1000}k: `DynamicWorld` / ours", ratio[n],
                               4.0, True))
        out.append(target_line(f"load at start at {n // 1000}k: ours, p99", p99s[n], 100.0, False,
                               unit="ms"))
    out.append("")
    return out


def frame_section(quick):
    log = log_text("frame_time")
    blocks = re.split(r"^(?=frame_time/)", log, flags=re.M)[1:]
    if not blocks:
        return []
    frames = re.search(r"(\d+) frames at 60 FPS", blocks[0]).group(1)
    calibration = re.search(r"calibrated to \d+ rounds = [\d.]+ ms", log)
    out = [FRAME_TITLE,
           f"Measured {datetime.date.today()} (`cargo bench --bench frame_time`, {frames} frames per "
           f"run{', quick mode' if quick else ''}). Headless (`MinimalPlugins`, two compute "
           "threads so Bevy runs the two busy systems in parallel), paced to 60 FPS (the wait is "
           "not in the frame time), two busy systems of about 3 ms each, a tenth of the entities "
           "moving every frame, and with autosave a save every 10 frames, each after 10 frames of "
           "motion (10 % of the entities changed since the previous save; a first, full save "
           "comes before the measured frames). *Capture* is `SaveCompleted::capture_time` (the "
           "main thread's part of each save), *latency* the time from the request to "
           "`SaveCompleted`, *pool per save* the pool's work (`finish`, `format::encode`, the "
           "durable write) after the same 10 frames of motion, timed outside the frames on the "
           "same world, against a full save's.\n"]
    rows = []
    added, p99_ratio, capture99 = {}, {}, {}
    runs = {}
    for block in blocks:
        head = re.match(r"frame_time/(\S+), (\d+) entities", block)
        s, n = head.group(1), int(head.group(2))
        runs[(s, n)] = runs.get((s, n), 0) + 1
        f = {key: re.search(pattern, block) for key, pattern in FRAME_NUMBERS.items()}
        if not (f["without"] and f["with"]):
            continue
        w0, w1 = f["without"], f["with"]
        r = float(w1.group(2)) / float(w0.group(2))
        more = max(0, int(w1.group(3)) - int(w0.group(3)))
        added.setdefault(n, {})[s] = float(more)
        p99_ratio.setdefault(n, {})[s] = r
        c, pl = f["capture"], f["pool"]
        if c:
            capture99.setdefault(n, {})[s] = float(c.group(3))
        label = n if runs[(s, n)] == 1 else f"{n} (run {runs[(s, n)]})"
        rows.append([f"`{s}`", label, f"{w0.group(1)} / {w0.group(2)} ms", f"{w1.group(1)} / {w1.group(2)} ms",
                     f"{r:.2f}×", f"{w0.group(3)} / {w1.group(3)}",
                     f"{c.group(2)} / {c.group(3)} ms" if c else "—",
                     f"{c.group(4)} / {c.group(5)} ms" if c else "—",
                     f"{pl.group(1)} / {pl.group(3)} ms" if pl else "—",
                     f"{float(pl.group(3)) / float(pl.group(1)):.2f}×" if pl else "—"])
    out.append(table(["shape", "entities", "frame p50 / p99 without", "p50 / p99 with autosave",
                      "p99 with / without", "frames over 16.7 ms without / with",
                      "capture p50 / p99", "latency p50 / p99", "pool per save p50 / full save p50",
                      "full / 10 %"], rows))
    out.append("")
    again = [f"`{s}` at {n // 1000}k" for (s, n), count in runs.items() if count > 1]
    if again:
        out.append("Run again after a first run that other work on this shared machine disturbed "
                   "(frames far above the busy systems' 6 ms with a short capture): "
                   + ", ".join(again) + ". Both runs are in the table; the targets are judged on "
                   "the last.\n")
    out.append("Targets (issue 24), each judged on the worst shape:\n")
    for n in sorted(added):
        out.append(target_line(f"frames over 16.7 ms added by autosaves at {n // 1000}k "
                               "(with minus without)", added[n], 0, False, unit="frames"))
        out.append(target_line(f"frame p99 with autosave / without at {n // 1000}k",
                               p99_ratio[n], 1.10, False))
    if 100000 in capture99:
        out.append(target_line("main-thread part of a save at 100k, 10 % changed, p99 "
                               "(`capture_time` in the game)", capture99[100000], 1.0, False, unit="ms"))
    out.append("")
    out += play_section(blocks)
    out.append("```\n" + "\n".join(frame_time_lines(log)) + "\n```\n")
    out.append(FRAME_WHY)
    return out


HISTORY_TITLE = "## Issue 24, step by step (earlier runs)\n"


def kept_section(title):
    """The section headed `title` of the BENCHMARKS.md being replaced, unchanged: the runs that
    led to the current figures are not measured again."""
    path = ROOT / "BENCHMARKS.md"
    text = path.read_text() if path.exists() else ""
    start = text.find(title)
    if start < 0:
        return []
    end = text.find("\n## ", start + len(title))
    return [text[start:len(text) if end < 0 else end + 1]]


def rewrite_section(title, lines, before="## Frame time"):
    """Replaces the section headed `title` in BENCHMARKS.md (up to the next `## `) by `lines`;
    a report without it gets it where a full report puts it, in front of `before`."""
    path = ROOT / "BENCHMARKS.md"
    text = path.read_text()
    start = text.find(title)
    if start < 0:
        start = end = text.index(before)
    else:
        end = text.find("\n## ", start + len(title))
        end = len(text) if end < 0 else end + 1
    path.write_text(text[:start] + "\n".join(lines) + "\n" + text[end:])
    print(f"rewrote {title.strip()} in {path}")


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def report(quick):
    e = estimates()
    get = e.get
    out = []
    w = out.append
    w("# bevy_keepsake benchmarks\n")
    w(f"Generated by `scripts/bench_report.py` on {datetime.date.today()}"
      f"{' (QUICK smoke run: figures are indicative only)' if quick else ''}.")
    w(f"Machine: {machine()}.\n")
    w("Each figure is criterion's mean. Baselines ran in the same run, so ratios compare like with "
      "like. The reference figures come from the `aw-save` report (Windows 10, NVMe SSD, buffers "
      "of one repeated byte) and were measured on a different machine: compare their order of "
      "magnitude, not the digits. Our bundles are game-shaped (mixed floats, ids, names, "
      "inventories) unless marked *repeated byte*.\n")

    # Snapshot against DynamicWorld.
    w("## Snapshot: keepsake against Bevy's `DynamicWorld` (same world, same run)\n")
    rows = []
    for n in ("1000", "10000", "100000"):
        ours = get(f"snapshot_save/keepsake_capture/{n}")
        refl = get(f"snapshot_save/keepsake_capture_reflect/{n}")
        pc = get(f"snapshot_save/dynamic_world_postcard/{n}")
        ron = get(f"snapshot_save/dynamic_world_ron/{n}")
        if ours is None:
            continue
        rows.append([f"capture + encode, {n}", fmt_time(ours), fmt_time(refl), fmt_time(pc),
                     ratio(pc, ours), fmt_time(ron), ratio(ron, ours)])
    for n in ("1000", "10000", "100000"):
        ours = get(f"snapshot_load/keepsake_decode_apply/{n}")
        pc = get(f"snapshot_load/dynamic_world_postcard/{n}")
        ron = get(f"snapshot_load/dynamic_world_ron/{n}")
        if ours is None:
            continue
        rows.append([f"decode + apply, {n}", fmt_time(ours), "", fmt_time(pc), ratio(pc, ours),
                     fmt_time(ron), ratio(ron, ours)])
    w(table(["entities", "keepsake", "keepsake (reflection only)", "DW + postcard",
             "DW postcard / ours", "DW + RON", "DW RON / ours"], rows))
    w("\nTargets at 10k entities (`DESIGN.md`): capture ≥ 8× faster than DW + postcard and ≥ 30× "
      "than DW + RON; load ≥ 3× and ≥ 8×.\n")
    sizes = re.findall(r"snapshot size, (\d+) entities: keepsake blob (\d+) bytes, "
                       r"DynamicWorld postcard (\d+) bytes .*?RON (\d+) bytes", log_text("snapshot"))
    sizes = list(dict.fromkeys(sizes))  # the save and load fixtures both print them
    if sizes:
        w(table(["entities", "ecs_blob", "DW postcard", "smaller by (target ≥ 3×)", "DW RON"],
                [[n, f"{int(b):,} B", f"{int(p):,} B", f"{int(p) / int(b):.2f}×", f"{int(r):,} B"]
                 for n, b, p, r in sizes]))
        w("")
    cap1, cap100 = get("snapshot_save/keepsake_capture/1000"), get("snapshot_save/keepsake_capture/100000")
    load1, load100 = get("snapshot_load/keepsake_decode_apply/1000"), get("snapshot_load/keepsake_decode_apply/100000")
    if cap1 and cap100 and load1 and load100:
        w(f"Scaling 1k → 100k entities (target ≤ 110×): capture {cap100 / cap1:.0f}×, "
          f"load {load100 / load1:.0f}×.\n")

    # The real-game world against DynamicWorld.
    real_log = log_text("snapshot")
    rows = []
    for n in ("1000", "10000", "100000"):
        ours = get(f"real_world_save/keepsake_capture/{n}")
        old = get(f"real_world_save/keepsake_capture_no_plans/{n}")
        pc = get(f"real_world_save/dynamic_world_postcard/{n}")
        ron = get(f"real_world_save/dynamic_world_ron/{n}")
        if ours is None:
            continue
        rows.append([f"capture + encode, {n}", fmt_time(ours), fmt_time(old), fmt_time(pc),
                     ratio(pc, ours), fmt_time(ron), ratio(ron, ours)])
    for n in ("1000", "10000", "100000"):
        ours = get(f"real_world_load/keepsake_decode_apply/{n}")
        pc = get(f"real_world_load/dynamic_world_postcard/{n}")
        ron = get(f"real_world_load/dynamic_world_ron/{n}")
        if ours is None:
            continue
        rows.append([f"decode + apply, {n}", fmt_time(ours), "", fmt_time(pc), ratio(pc, ours),
                     fmt_time(ron), ratio(ron, ours)])
    for n in ("1000", "10000", "100000"):
        ours = get(f"real_world_load/keepsake_decode/{n}")
        old = get(f"real_world_load/keepsake_decode_no_plans/{n}")
        if ours is None:
            continue
        rows.append([f"decode only, {n}", fmt_time(ours), fmt_time(old), "", "", "", ""])
    if rows:
        w("## Snapshot of a real-game world (hierarchy, references, enums, maps; mostly "
          "reflection-only types)\n")
        w(table(["entities", "keepsake", "keepsake without reflection plans", "DW + postcard",
                 "DW postcard / ours", "DW + RON", "DW RON / ours"], rows))
        failed = sorted(set(re.findall(r"real-game round trip FAILED: (\w+)", real_log)))
        checked = sorted(set(re.findall(r"real-game round trip (?:ok|FAILED): (\w+)", real_log)))
        if checked:
            w("\nRound trip (loaded world compared with the saved one by `UnitId`): "
              + ", ".join(f"{name} {'**does not round-trip**' if name in failed else 'ok'}"
                          for name in checked) + ".")
        cap = get("real_world_save/keepsake_capture/10000")
        load = get("real_world_load/keepsake_decode_apply/10000")
        cap1 = get("real_world_save/keepsake_capture/1000")
        cap100 = get("real_world_save/keepsake_capture/100000")
        load1 = get("real_world_load/keepsake_decode_apply/1000")
        load100 = get("real_world_load/keepsake_decode_apply/100000")
        first_refl = get("snapshot_save/keepsake_capture_reflect/10000")
        first_serde = get("snapshot_save/keepsake_capture/10000")
        w("\nTargets (10k entities, same run):\n")
        for label, value, target, at_least in (
            ("capture, DW + postcard / ours", quotient(get("real_world_save/dynamic_world_postcard/10000"), cap), 8, True),
            ("capture, DW + RON / ours", quotient(get("real_world_save/dynamic_world_ron/10000"), cap), 30, True),
            ("decode + apply, DW + postcard / ours", quotient(get("real_world_load/dynamic_world_postcard/10000"), load), 4, True),
            ("decode + apply, DW + RON / ours", quotient(get("real_world_load/dynamic_world_ron/10000"), load), 10, True),
            ("first world, reflection-only capture / serde capture", quotient(first_refl, first_serde), 1.5, False),
            ("capture, 100k / 1k", quotient(cap100, cap1), 105, False),
            ("decode + apply, 100k / 1k", quotient(load100, load1), 105, False),
        ):
            w(f"- {label}: {verdict(value, target, at_least)}")
        w("")
        w(MISSES_WHY)
        sizes = re.findall(r"real-game size, (\d+) entities: keepsake blob (\d+) bytes, "
                           r"DynamicWorld postcard (\d+) bytes .*?RON (\d+) bytes", real_log)
        sizes = list(dict.fromkeys(sizes))  # the save and load fixtures both print them
        if sizes:
            w(table(["entities", "ecs_blob", "DW postcard", "smaller by", "DW RON"],
                    [[n, f"{int(b):,} B", f"{int(p):,} B", f"{int(p) / int(b):.2f}×",
                      f"{int(r):,} B"] for n, b, p, r in sizes]))
            w("")
        rows = []
        for n in ("1000", "10000", "100000"):
            for what, planned, serde_id, generic in (
                ("capture", "real_world_save/keepsake_capture", "real_world_save/keepsake_capture_all_serde",
                 "real_world_save/keepsake_capture_no_plans"),
                ("decode", "real_world_load/keepsake_decode", "real_world_load/keepsake_decode_all_serde",
                 "real_world_load/keepsake_decode_no_plans"),
            ):
                p, sd, g = get(f"{planned}/{n}"), get(f"{serde_id}/{n}"), get(f"{generic}/{n}")
                if p is None or sd is None:
                    continue
                rows.append([f"{what}, {n}", fmt_time(p), fmt_time(g), fmt_time(sd), ratio(p, sd),
                             ratio(g, sd)])
        if rows:
            w("Reflection-only types with plans against the same types registered through serde "
              "(same bytes):\n")
            w(table(["entities", "reflection plans", "without plans", "all serde",
                     "plans / serde", "without plans / serde"], rows))
            w("")

    out.extend(layouts_section(get))

    out.extend(shapes_section(get, quick))
    out.extend(load_at_start_section())
    out.extend(frame_section(quick))
    out.extend(kept_section(HISTORY_TITLE))
    memory = log_text("memory")
    if memory:
        w("## Peak heap (counting allocator)\n")
        w("```\n" + "\n".join(result_lines(memory, "memory")) + "\n```\n")

    def group_table(title, names, baseline=None, note=""):
        rows = []
        for bench_id in names:
            ours = get(bench_id)
            if ours is None:
                continue
            row = [bench_id.split("/", 1)[1], fmt_time(ours)]
            if baseline:
                base_id = baseline(bench_id)
                row += [fmt_time(get(base_id)) if base_id else "—", ratio(ours, get(base_id)) if base_id else "—"]
            ref = REFERENCE.get(bench_id)
            row += [fmt_time(ref), ratio(ours, ref) if ref else "—"]
            rows.append(row)
        if not rows:
            return
        w(f"## {title}\n")
        header = ["benchmark", "keepsake"]
        if baseline:
            header += ["baseline", "ours / baseline"]
        header += ["aw-save reference", "ours / reference"]
        w(table(header, rows))
        w("")
        if note:
            w(note + "\n")

    sizes3 = ["10KB", "100KB", "1MB"]
    group_table("Serialization (postcard)", [f"serialization/{op}/{s}" for op in ("serialize", "deserialize") for s in sizes3])
    group_table("Compression (LZ4 block)",
                [f"compression/lz4_{op}_{kind}/{s}" for kind in ("game", "world", "repeated_byte")
                 for op in ("compress", "decompress") for s in sizes3],
                note="Compression ratios (from the run's log): " + "; ".join(
                    re.findall(r"lz4 (\S+ \S+: \d+ -> \d+ bytes \([\d.]+% of the original\))", log_text("format"))))
    group_table("Checksum (CRC32)", [f"checksum/crc32/{s}" for s in sizes3])
    group_table("Format: encode / decode / header read",
                [f"format/{op}/{s}" for op in ("encode", "encode_lz4_always", "decode",
                                              "decode_lz4_always", "read_summary")
                 for s in sizes3 + ["1MB_world"]],
                note="`encode` and `decode` use the default codec choice (LZ4 only when it shrinks the "
                     "payload to ≤ 80 %); the `lz4_always` rows compress every payload, as every save "
                     "did before. Codec chosen (from the run's log): " + "; ".join(
                         re.findall(r"format (\S+: payload stored with [^,]+, \d+ of \d+ bytes)",
                                    log_text("format"))))

    def io_baseline(bench_id):
        size = bench_id.rsplit("/", 1)[1]
        prefix = "lz4_always_" if "/lz4_always_" in bench_id else ""
        if "full_save/" in bench_id:
            return f"save_load/{prefix}baseline_durable_write/{size}"
        if "full_load/" in bench_id:
            return f"save_load/{prefix}baseline_fs_read/{size}"
        return None

    cycle_sizes = sizes3 + ["1MB_world"]
    group_table("Full save / load cycle",
                [f"save_load/{op}/{s}" for op in ("full_save", "lz4_always_full_save", "full_load",
                                                 "lz4_always_full_load", "round_trip")
                 for s in cycle_sizes],
                baseline=io_baseline,
                note="Baselines: a bare temp-write + fsync + rename + folder fsync of the same bytes "
                     "(save), and a bare `fs::read` of the same file (load). Targets (`DESIGN.md`, "
                     "round two): a 1 MB save ≤ 1.5× the bare durable write (encoding included) and a "
                     "1 MB load ≤ 6× the bare read (CRC, decompression and postcard included). `1MB` is "
                     "the synthetic game-like blob (random floats: LZ4 leaves 87 %), `1MB_world` 1 MB of "
                     "a captured game world's snapshot blob (LZ4 leaves about 45 %). The `lz4_always` "
                     "rows compress every payload, as every save did before the codec choice, each "
                     "against the bare write and read of its own (smaller) file. Codec chosen (from the "
                     "run's log): " + "; ".join(
                         re.findall(r"save_load (\S+: payload stored with [^,]+, file \d+ bytes)",
                                    log_text("store"))))
    group_table("Listing",
                [f"listing/list_saves/{n}" for n in (0, 10, 100)] +
                [f"listing/list_16_slots/{s}" for s in ("10KB", "5MB")],
                note="Target: listing 16 slots costs the same with 10 KB and 5 MB saves (headers only).")
    scale = ["1KB", "10KB", "100KB", "500KB", "1MB", "5MB"]
    group_table("Scaling 1 KB – 5 MB", [f"scaling/{op}/{s}" for op in ("save", "load") for s in scale])
    group_table("Migration (load a v1 save through `register_saveable_migration`)",
                [f"migration/{op}/{n}" for op in ("load_v1_save_through_migration", "load_current_save")
                 for n in (1000, 10000)],
                note="The reference report did not benchmark migration (it estimated 10.5 ms).")
    par, seq = get("concurrency/10_saves_parallel_task_pool"), get("concurrency/10_saves_sequential")
    if par and seq:
        w("## Concurrency (10 saves of 1 MB into 10 slots)\n")
        w(table(["benchmark", "keepsake", "aw-save reference (estimated)"],
                [["10 saves, one after another", fmt_time(seq), "54 ms"],
                 ["10 saves in parallel on the task pool", fmt_time(par), "15 ms"],
                 ["speed-up", f"{seq / par:.2f}×", "3.6×"]]))
        w("")
    (ROOT / "BENCHMARKS.md").write_text("\n".join(out))
    print(f"wrote {ROOT / 'BENCHMARKS.md'}")


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


def main():
    quick = "--quick" in sys.argv
    if "--only" in sys.argv:
        only = sys.argv[sys.argv.index("--only") + 1]
        # section -> (the heading it is found by, the heading it goes in front of when absent,
        # how it is built); the other sections of BENCHMARKS.md keep their figures.
        sections = {
            "layouts": (LAYOUTS_TITLE, "## Frame time", lambda: layouts_section(estimates().get)),
            "shapes": ("## World shapes", "## Frame time", lambda: shapes_section(estimates().get, quick)),
            "frame_time": ("## Frame time", "## Peak heap", lambda: frame_section(quick)),
            "load_at_start": (LOAD_AT_START_TITLE, "## Frame time", load_at_start_section),
        }
        if only not in sections:
            sys.exit(f"--only knows {', '.join(sections)} (not {only})")
        if "--no-run" not in sys.argv:
            run_load_at_start() if only == "load_at_start" else run_benches(quick, [only])
        title, before, build = sections[only]
        rewrite_section(title, build(), before)
        return
    if "--no-run" not in sys.argv:
        run_benches(quick, BENCHES)
    report(quick)
    if "--before" in sys.argv:
        before = Path(sys.argv[sys.argv.index("--before") + 1]).read_text()
        label = sys.argv[sys.argv.index("--label") + 1] if "--label" in sys.argv else "before"
        path = ROOT / "BENCHMARKS.md"
        path.write_text(path.read_text() + "\n" + moved_section(before, path.read_text(), label))


if __name__ == "__main__":
    main()
