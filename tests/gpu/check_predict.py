#!/usr/bin/env python3
"""Replays a probe run's dumps against the model, with no GPU.

For every probe of the selected groups in a run_probes.sh log, runs `gpu_probe ARGS predict` and
compares the model's image with what the hardware did:
  * tagged probes with a dump (MISMATCH / TIMEOUT): chunk by chunk, the log's hw column against
    the prediction (shared memory for loads, global memory for stores);
  * PASS probes: hw == the model of the run; checked against an older gpu_probe (--old) when given,
    else reported as "pass (not replayed)";
  * untagged probes without a dump: the verdict's numbers (bytes differing from the old model, the
    first differing bytes, bytes written outside the old image) recomputed from the new and the old
    predictions on the same seeded random data (needs --old).

  tests/gpu/check_predict.py --log probes.log --probes tests/gpu/probes.txt \
      --probe build/tests/gpu/gpu_probe [--old old/gpu_probe] [--groups D,D2,D3,D4]
Exit 0 when every replayed probe is reproduced.
"""
import argparse
import re
import subprocess
import sys

VERDICT = re.compile(r"^(\d+) (\S+) (PASS|MISMATCH|TIMEOUT|FAULT|INVALID|MODEL-ERROR|DRIVER-REJECT|"
                     r"ERROR|SKIP|KILLED|CRASH)\b(.*)$")
LINE = re.compile(r"^\s+\*?\s*\[\s*(-?\d+),\s*(-?\d+)\)\s+(.*)$")
COLUMN = re.compile(r"(\w+): ")
RUN = re.compile(r"^([gs])\[(-?\d+),(-?\d+)\)(?: x(\d+) step (\d+))?$")


def chunks_of(text, begin, end):
    """{offset: what} for the 16-byte chunks [begin, end) one dump column describes."""
    n = (end - begin) // 16
    m = RUN.match(text)
    out = {}
    if m:
        src, a, b, count, step = m.group(1), int(m.group(2)), int(m.group(3)), m.group(4), m.group(5)
        if count is None:
            assert b - a == 16 * n, (text, begin, end)
            for i in range(n):
                out[begin + 16 * i] = (src, a + 16 * i)
        else:
            assert int(count) == n, (text, begin, end)
            for i in range(n):
                out[begin + 16 * i] = (src, a + int(step) * i)
        return out
    if text in ("poison", "zero", "OOB-NaN"):
        return {begin + 16 * i: (text,) for i in range(n)}
    assert n == 1, (text, begin, end)
    return {begin: ("text", text)}


def parse_dump(lines):
    """{column name: {offset: what}} from a dump's indented lines."""
    cols = {}
    for line in lines:
        m = LINE.match(line)
        if not m:
            continue
        begin, end, rest = int(m.group(1)), int(m.group(2)), m.group(3)
        parts = COLUMN.split(rest)
        # parts: ['', name1, text1, name2, text2, ...]
        for i in range(1, len(parts) - 1, 2):
            cols.setdefault(parts[i], {}).update(chunks_of(parts[i + 1].strip(), begin, end))
    return cols


def parse_log(path):
    entries = []
    with open(path) as f:
        for raw in f:
            line = raw.rstrip("\n")
            m = VERDICT.match(line)
            if m:
                entries.append({"line": int(m.group(1)), "group": m.group(2),
                                "verdict": m.group(3), "text": m.group(4), "dump": []})
            elif entries and line.startswith(" "):
                entries[-1]["dump"].append(line)
    return entries


def predict(probe, args):
    out = subprocess.run([probe] + args + ["predict"], capture_output=True, text=True)
    lines = out.stdout.splitlines()
    if not lines or not lines[0].startswith("PREDICT") or "model error" in lines[0]:
        raise RuntimeError(" ".join(args) + ": " + out.stdout + out.stderr)
    return parse_dump(lines[1:]).get("model", {})


def hex_bytes(model):
    """{byte offset: value} of a random-data prediction (hex chunks); poison chunks left out."""
    out = {}
    for off, what in model.items():
        if what[0] == "text":
            words = what[1].split()
            data = bytes.fromhex("".join(words))
            for i, b in enumerate(data):
                out[off + i] = b
        elif what[0] == "zero":
            for i in range(16):
                out[off + i] = 0
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--log", required=True)
    ap.add_argument("--probes", required=True)
    ap.add_argument("--probe", required=True)
    ap.add_argument("--old")
    ap.add_argument("--groups", default="D,D2,D3,D4")
    ap.add_argument("--verbose", action="store_true")
    a = ap.parse_args()
    groups = set(a.groups.split(","))
    probe_lines = open(a.probes).read().splitlines()
    ok = bad = 0
    for e in parse_log(a.log):
        if e["group"] not in groups:
            continue
        args = probe_lines[e["line"] - 1].split()
        args = [x for x in args if x != "dump"]
        name = f"line {e['line']} {e['verdict']}"
        tagged = "data=tagged" in args
        if e["verdict"] == "PASS":
            if not a.old:
                print(f"{name}: pass (not replayed)")
                continue
            same = predict(a.probe, args) == predict(a.old, args)
            print(f"{name}: {'reproduced' if same else 'DIFFERS'} (hw == old model)")
            ok, bad = ok + same, bad + (not same)
            continue
        if tagged and e["dump"]:
            hw = parse_dump(e["dump"]).get("hw", {})
            model = predict(a.probe, args)
            diffs = [o for o in sorted(set(hw) | set(model))
                     if hw.get(o, ("poison",)) != model.get(o, ("poison",))]
            where = "global" if args[0] == "store" else "smem"
            if diffs:
                bad += 1
                print(f"{name}: DIFFERS in {len(diffs)} chunks ({where}), first at {diffs[0]}: "
                      f"hw {hw.get(diffs[0], ('poison',))} model {model.get(diffs[0], ('poison',))}")
            else:
                ok += 1
                written = sum(1 for v in hw.values() if v[0] != "poison")
                print(f"{name}: reproduced ({written} chunks of {where} written, {where} compared "
                      f"chunk by chunk)")
            continue
        if not tagged and a.old and e["verdict"] in ("MISMATCH", "TIMEOUT"):
            # "N of M image bytes differ, first at F (hw .. / model ..); K bytes written outside"
            t = e["text"]
            m1 = re.search(r"(\d+) of (\d+) image bytes differ, first at (\d+) \(hw((?: [0-9a-f]{2})+)", t)
            m2 = re.search(r"(\d+) bytes written outside the image", t)
            new, old = hex_bytes(predict(a.probe, args)), hex_bytes(predict(a.old, args))
            size = int(m1.group(2)) if m1 else max(old) + 1
            differ = [i for i in range(size) if new.get(i) != old.get(i)]
            outside = sum(1 for i, v in new.items() if i >= size and v != 0xA5)
            want_hw = bytes.fromhex(m1.group(4).replace(" ", "")) if m1 else b""
            got_hw = bytes(new.get(differ[0] + i, 0xA5) for i in range(len(want_hw))) if differ else b""
            checks = [
                (m1 is None and not differ) or (m1 and len(differ) == int(m1.group(1))),
                m1 is None or (differ and differ[0] == int(m1.group(3)) and got_hw == want_hw),
                (m2 is None and outside == 0) or (m2 and outside == int(m2.group(1))),
            ]
            good = all(checks)
            ok, bad = ok + good, bad + (not good)
            print(f"{name}: {'reproduced' if good else 'DIFFERS'} (random data: {len(differ)} bytes "
                  f"differ from the old model in its image, first at {differ[0] if differ else '-'}, "
                  f"{outside} written past it; log: {t.strip()[:160]})")
            continue
        print(f"{name}: not replayed (no dump)")
    print(f"summary: {ok} reproduced, {bad} differ")
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
