"""``python -m isotropy.committed check|write|copy``: every committed run's checksums and pages."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from isotropy.committed import BY_NAME, REGISTRY, record
from isotropy.intake import read_json


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m isotropy.committed", description=__doc__)
    parser.add_argument("--root", type=Path, default=Path("."), help="the repository (here)")
    commands = parser.add_subparsers(dest="command", required=True)
    for name, says in (
        ("check", "say which committed file fails its checksum and which page is stale"),
        ("write", "render the pages again from the committed files"),
    ):
        command = commands.add_parser(name, help=says)
        command.add_argument("runs", nargs="*", help=f"of {', '.join(BY_NAME)} (default: all)")
    sources = "; ".join(f"{r.name}: {r.sources}" for r in REGISTRY if r.copy is not None)
    says = "copy a finished run in, then render its pages"
    copy = commands.add_parser("copy", help=says, epilog=f"sources: {sources}")
    copy.add_argument("run", choices=[r.name for r in REGISTRY if r.copy is not None])
    copy.add_argument("sources", nargs="+", type=Path, help="the run's results (see each run)")
    copy.add_argument("--facts", type=Path, help="a JSON file of the run's facts (start, end …)")
    copy.add_argument("--effective-config", type=Path, help="default: the run's target's")
    copy.add_argument("--into", type=Path, help="which of the run's records (default: the first)")
    args = parser.parse_args(argv)
    if not (args.root / record.DATA).is_dir():  # one line, not an error a page, nothing copied
        parser.error(f"--root {args.root} is not this repository: no {record.DATA} there")
    if args.command == "copy":
        try:
            facts = read_json(args.facts.parent, args.facts.name) if args.facts else {}
        except ValueError as error:  # the door's FolderError: one line naming the file
            parser.error(f"--facts: {error}")
        try:  # a run not finished, a page without its markers: one line, nothing written
            run = BY_NAME[args.run]
            into = run.copy_in(args.root, args.sources, facts, args.effective_config, args.into)
        except (OSError, ValueError) as error:
            parser.error(str(error))
        print(f"copied {args.run} into {into.path}; wrote its pages", file=sys.stderr)
        return 0
    if unknown := sorted(set(args.runs) - set(BY_NAME)):
        parser.error(f"no committed run {', '.join(unknown)}: choose from {', '.join(BY_NAME)}")
    chosen = [BY_NAME[name] for name in args.runs] or list(REGISTRY)
    ready = [run for run in chosen if run.committed(args.root)]
    waiting = [run.name for run in chosen if run not in ready]
    if args.command == "write":
        if args.runs and waiting:
            parser.error(f"not committed yet: {', '.join(waiting)} (copy a finished run first)")
        for run in ready:
            try:  # a file missing or failing its checksum
                run.write(args.root)
            except (OSError, ValueError) as error:
                parser.error(f"{run.name}: {error}")
            print(f"{run.name}: wrote {', '.join(str(p.path) for p in run.pages)}", file=sys.stderr)
        return 0
    problems = [p for run in ready for p in run.problems(args.root)]
    print("\n".join(problems) or f"{len(ready)} committed runs: every file and page fresh")
    if waiting:
        print(f"not committed yet: {', '.join(waiting)}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
