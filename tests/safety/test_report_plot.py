"""The safety run's plot (reports/safety/plot.py) from a history written by hand: what it counts per second, the
latency it draws, where the fault windows fall, and that the file is one self-contained SVG document."""

import xml.etree.ElementTree as ET

import pytest

from wirecheck.reports.safety import checker, history, plot, report

SVG = "{http://www.w3.org/2000/svg}"


def hand_made() -> list[dict]:
    """Seconds 0-1: ten sends per second, 10 ms each; second 2: none; second 3 (a delay window from 2.5 to 4.0):
    two sends of 20 and 60 ms, one indeterminate send of 1.5 s, one failed transaction; a kill at 5.0 never
    closed; a client crash at 4.5; a poll of 100 ms at 5.2."""
    ops, value = [], 0

    def op(type_, process, time, f, val=None, **extra):
        ops.append({"type": type_, "process": process, "time": time, "f": f, "value": val, **extra})

    def send(process, start, seconds, type_="ok", f="send"):
        nonlocal value
        value += 1
        op("invoke", process, start, f, [["send", "t/0", value]])
        op(type_, process, round(start + seconds, 6), f, [["send", "t/0", [value if type_ == "ok" else None,
                                                                          value]]])

    for second in (0, 1):
        for i in range(10):
            send(1, second + i / 10, 0.01)
    op("info", "nemesis", 2.5, "fault", {"fault": "delay", "phase": "start", "delay": 0.5})
    send(1, 3.1, 0.02)
    send(1, 3.3, 0.06)
    send(2, 2.4, 1.5, type_="info")
    send(3, 3.2, 0.3, type_="fail", f="txn")
    op("info", "nemesis", 4.0, "fault", {"fault": "delay", "phase": "end"})
    op("info", 2, 4.5, "crash")
    op("info", "nemesis", 5.0, "fault", {"fault": "kill", "phase": "start"})
    op("invoke", 4, 5.2, "poll", [["poll"]])
    op("ok", 4, 5.3, "poll", [["poll", {"t/0": [[1, 1]]}]])
    return history.parse(sorted(ops, key=lambda o: o["time"]))


def test_series_counts_each_second_and_each_kind_of_completion():
    data = plot.series(hand_made())
    assert data["end"] == 5.3
    assert data["throughput"]["ok"] == [10, 10, 0, 2, 0, 1]
    assert data["throughput"]["info"] == [0, 0, 0, 1, 0, 0]  # the 1.5 s send completed at 3.9
    assert data["throughput"]["fail"] == [0, 0, 0, 1, 0, 0]
    send = {slot: (median, top) for slot, median, top in data["latency"]["send"]}
    assert set(send) == {0, 1, 3}
    assert send[0] == pytest.approx((0.01, 0.01)) and send[3] == pytest.approx((0.04, 0.06))
    assert data["latency"]["poll"] == [(5, pytest.approx(0.1), pytest.approx(0.1))]
    assert [(t, round(lat, 6)) for t, lat in data["marks"]["info"]] == [(3.9, 1.5)]
    assert [(t, round(lat, 6)) for t, lat in data["marks"]["fail"]] == [(3.5, 0.3)]
    assert data["crashes"] == [4.5]


def _svg(ops):
    text = plot.svg(ops, report.fault_windows(ops), "safety kafka against 127.0.0.1:9092: no anomaly")
    return text, ET.fromstring(text)


def _x(time, end):
    return plot.LEFT + (plot.WIDTH - plot.LEFT - plot.RIGHT) * time / end


def test_fault_windows_are_shaded_where_they_happened():
    text, root = _svg(hand_made())
    shaded = [r for r in root.iter(f"{SVG}rect") if r.get("class") == "fault"]
    assert [r.get("data-fault") for r in shaded] == ["delay", "kill"]
    delay, kill = shaded
    assert float(delay.get("x")) == pytest.approx(_x(2.5, 5.3), abs=0.01)
    assert float(delay.get("width")) == pytest.approx(_x(4.0, 5.3) - _x(2.5, 5.3), abs=0.01)
    assert float(kill.get("x")) + float(kill.get("width")) == pytest.approx(_x(5.3, 5.3), abs=0.01)  # to the end
    assert delay.find(f"{SVG}title").text == "delay: 2.500 s to 4.000 s"
    assert kill.find(f"{SVG}title").text.endswith("never closed")
    assert delay.get("fill") != kill.get("fill")
    assert "fault: delay" in text and "fault: kill" in text


def test_lines_follow_the_counts_and_break_where_nothing_completed():
    _, root = _svg(hand_made())
    lines = {p.get("data-type"): p for p in root.iter(f"{SVG}polyline") if p.get("class") == "throughput"}
    assert set(lines) == {"ok", "fail", "info"}
    ys = [float(point.split(",")[1]) for point in lines["ok"].get("points").split()]
    assert ys[0] == ys[1] < ys[3] < ys[5] < ys[2] == ys[4]  # 10, 10 > 2 > 1 > 0 (SVG's y grows downwards)
    median = next(p for p in root.iter(f"{SVG}path") if p.get("data-f") == "send" and p.get("data-stat") == "median")
    assert [step[0] for step in median.get("d").split()] == ["M", "L", "M"]  # second 2 had no send: a gap
    marks = [c.get("data-type") for c in root.iter(f"{SVG}circle")]
    assert sorted(marks) == ["fail", "info"]
    assert len([line for line in root.iter(f"{SVG}line") if line.get("class") == "crash"]) == 1


def test_marks_are_bounded_and_the_legend_says_how_many_were_drawn(monkeypatch):
    monkeypatch.setattr(plot, "MAX_MARKS", 3)
    ops = []
    for i in range(10):
        ops += [{"type": "invoke", "process": i, "time": i, "f": "send", "value": [["send", "t/0", i]]},
                {"type": "info", "process": i, "time": i + 0.5, "f": "send", "value": [["send", "t/0", i]]}]
    text, root = _svg(history.parse(ops))
    assert len(list(root.iter(f"{SVG}circle"))) == 3
    assert "info op (3 of 10)" in text


def test_the_file_fetches_nothing_and_an_empty_history_still_plots():
    text, root = _svg(hand_made())
    assert root.tag == f"{SVG}svg" and "<script" not in text
    assert not [e for e in root.iter() if any(k.endswith("href") for k in e.attrib)]
    assert text.count("http") == 1  # the namespace, nothing to fetch
    _, empty = _svg([])
    assert empty.find(f"{SVG}title").text.endswith("no anomaly")


def test_the_report_writes_the_plot_beside_result_json(tmp_path):
    ops = hand_made()
    result = checker.check(ops)
    built = report.build(result, ops, {"protocol": "kafka", "target": "127.0.0.1:9092"})
    report.write(built, tmp_path, ops)
    assert {p.name for p in tmp_path.iterdir()} == {"result.json", "report.txt", "plot.svg"}
    assert ET.parse(tmp_path / "plot.svg").getroot().find(f"{SVG}title").text == (
        (tmp_path / "report.txt").read_text().splitlines()[0])
    other = tmp_path / "no-history"
    other.mkdir()
    report.write(built, other)
    assert not (other / "plot.svg").exists()
