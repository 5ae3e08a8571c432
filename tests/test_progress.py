"""Progress lines of long jobs in their log: done/total and the time left at the rate so far."""

import logging

from snakemake_interface_logger_plugins.common import LogEvent

from isotropy.logs import ProgressLog, TimeLeft


def test_progress_logs_the_time_left_at_most_every_interval_and_at_the_end(caplog):
    now = [0.0]
    progress = ProgressLog(1000, "encoded texts", every=30, clock=lambda: now[0])
    with caplog.at_level(logging.INFO, logger="isotropy.progress"):
        for now[0], done in [
            (10.0, 100),  # 10 s since the last line: nothing yet
            (60.0, 150),  # 250 of 1000 in 60 s: 180 s to go
            (70.0, 250),
            (200.0, 500),  # the end is always logged
        ]:
            progress.update(done)
    lines = [record.getMessage() for record in caplog.records]
    assert lines == [
        "encoded texts: 250/1,000 (25.0%), elapsed 1.0 min, about 3.0 min left",
        "encoded texts: 1,000/1,000 (100.0%), elapsed 3.3 min, about 0 s left",
    ]
    assert ProgressLog(10, "x").line(0.0).endswith("about ? left")
    assert "1 h 02 min" in ProgressLog(2, "x").line(3700.0)


def test_a_loop_that_may_stop_early_reports_the_nearer_limit(caplog):
    now = [0.0]
    progress = ProgressLog(5000, "token embeddings, sentences read", every=30, clock=lambda: now[0])
    with caplog.at_level(logging.INFO, logger="isotropy.progress"):
        for now[0], done, share in [
            (40.0, 100, 0.4),  # 100 of 5,000 sentences read, but 40% of the token cap kept
            (100.0, 150, 1.0),  # the cap is reached: logged as the end
        ]:
            progress.update(done, share=share)
    assert [r.getMessage() for r in caplog.records] == [
        "token embeddings, sentences read: 100/5,000, 40.0% of the work, elapsed 40 s, about 1.0 "
        "min left",
        "token embeddings, sentences read: 250/5,000, 100.0% of the work, elapsed 1.7 min, about 0 "
        "s left",
    ]


def test_a_run_says_the_time_left_after_each_finished_job_but_the_last(capsys):
    now = [0.0]
    handler = TimeLeft(clock=lambda: now[0])
    for now[0], done in [(60.0, 1), (90.0, 3), (120.0, 4)]:
        handler.emit(logging.makeLogRecord({"event": LogEvent.PROGRESS, "done": done, "total": 4}))
    handler.emit(logging.makeLogRecord({"event": LogEvent.JOB_INFO, "done": 1, "total": 4}))
    assert capsys.readouterr().err.splitlines() == [
        "jobs: 1/4 (25.0%), elapsed 1.0 min, about 3.0 min left at the rate so far",
        "jobs: 3/4 (75.0%), elapsed 1.5 min, about 30 s left at the rate so far",
    ]
