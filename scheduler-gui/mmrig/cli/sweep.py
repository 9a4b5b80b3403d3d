"""`mmrig sweep`: a campaign over a grid of conditions (docs/campaigns.md), run and summed up here; the
campaign itself is `mmrig.sweep`."""

from __future__ import annotations

import argparse
import shutil
import signal
import sys
import threading
from pathlib import Path

from .options import TICKS, add_profiler_kind_option, parse_interval


SWEEP_EPILOG = """\
exit codes: 0 every point run valid; 3 some point invalid or failed (kept on disk, listed in campaign.json);
a point the scheduler refuses as given (a rate the line cannot carry at its --baud) is listed, never run;
2 bad input, a cluster that cannot be reached or has no worker (one line, nothing run, nothing written);
4 the cluster lost every worker, or its scheduler stopped answering, for --lost-after seconds (one line; the
points done are kept: run the same command again when the cluster is back); 130 interrupted (the points done
are kept: run the same command again, or --resume --out FOLDER, to continue).
files: FOLDER/points/POINT.csv + .json (each a normal run), FOLDER/points.jsonl (the points' record, a line
per change), FOLDER/campaign.json (the campaign's sidecar), FOLDER/figures/on_time.png + .svg.
docs/campaigns.md: clusters on other machines, the limits.
"""


def given_or(value: str | None, default: str) -> str:
    """The option's text as given (an empty one too, for its parser to refuse), else the default."""
    return default if value is None else value


def intervals_as_rates(text: str) -> str:
    """-i's comma list, cyclictest's unit (a plain number is us, or with a unit), as --rate's: ticks as they are
    (tick-aligned), a time as 'Xms' (the free-running timer); ValueError naming the part it cannot read."""
    rates = []
    for part in text.split(","):
        if TICKS.fullmatch(part.strip().lower()) or part.strip().lower() == "tick":
            rates.append(part)
            continue
        try:
            ms = parse_interval(part)
        except argparse.ArgumentTypeError as exc:
            raise ValueError(f"-i: {part!r}: {exc}") from None
        rates.append("tick" if ms is None else f"{ms:g}ms")
    return ",".join(rates)


def cmd_sweep(args: argparse.Namespace) -> int:
    from mmrig.sweep.campaign import (DISPATCHES, EXIT_INTERRUPTED, LOADS, Campaign, Plan, SweepError, describe,
                                      parse_bauds, parse_choices, parse_distances, parse_rates, run_campaign)

    def error(text: str) -> int:
        print(f"mmrig sweep: {text}", file=sys.stderr)
        return 2

    log = (lambda _t: None) if args.quiet else (lambda t: print(t, file=sys.stderr, flush=True))
    try:
        if args.interval is not None:          # -i in cyclictest's unit: from here on as --rate's
            try:
                args.rate = intervals_as_rates(args.interval)
            except ValueError as exc:
                raise SweepError(str(exc)) from None
        if args.workers is not None and args.workers < 1:
            raise SweepError(f"--workers must be at least 1, not {args.workers}")
        if not args.lost_after > 0:
            raise SweepError(f"--lost-after must be a number of seconds above 0, not {args.lost_after:g}")
        if args.paced and (args.cluster or args.workers):
            raise SweepError("--paced points run one at a time in this process (they measure the host): "
                             "no --workers or --cluster with --paced")
        given = [a for a in ("distance", "rate", "dispatch", "load", "baud", "count", "mode", "generation")
                 if getattr(args, a) is not None]
        if args.resume and not given:
            plan = None                         # the folder's own axes and options
        else:
            if args.distance is None:
                raise SweepError("--distance is required (e.g. 1..4), or --resume --out FOLDER to continue one")
            # an option given empty (--rate '') is refused by its parser, never taken for the default
            plan = Plan(distance=parse_distances(args.distance), rate=parse_rates(given_or(args.rate, "tick")),
                        dispatch=parse_choices(given_or(args.dispatch, "isr"), DISPATCHES, "--dispatch"),
                        load=parse_choices(given_or(args.load, "idle"), LOADS, "--load"),
                        baud=parse_bauds(args.baud) if args.baud is not None else None, mode=args.mode or "mixed",
                        count=args.count if args.count is not None else 200, paced=args.paced,
                        profiler_kind=args.profiler_kind, generation=args.generation or "free")
        if args.out.exists() and not args.out.is_dir():
            raise SweepError(f"--out: {args.out} exists and is not a folder")
        camp = Campaign.open(args.out, plan)
        plan = camp.plan
        if plan.paced and any(x != "idle" for x in plan.load) and shutil.which("stress-ng") is None:
            raise SweepError("--load needs stress-ng, which is not installed (apt-get install stress-ng)")
    except SweepError as exc:
        return error(str(exc))

    from mmrig.sweep.task import run_point   # the entry point chooses the bench; the core never does

    # Nothing is written before the cluster answers (run_campaign reaches it first): a --cluster that cannot be
    # reached leaves no campaign.json behind to lock the folder to these axes.
    log(f"mmrig sweep: campaign {args.out} ({describe(plan)}): {len(plan.points())} points")
    stopping = threading.Event()

    def stop(signum: int, frame: object) -> None:
        # SIGINT, SIGTERM, SIGHUP (Ctrl-C, a CI timeout, a closed terminal) end the campaign: the points done
        # are kept, the cluster and the benches are closed, the sidecar says interrupted. Noted as well as
        # raised: an interrupt raised inside a Dask wait can be swallowed there (seen under load: a sweep
        # that ran all its points after Ctrl-C); the campaign checks the note after every point.
        stopping.set()
        raise KeyboardInterrupt(signal.Signals(signum).name)

    # The handlers stay until the figures are written: a signal at any moment ends the campaign as Ctrl-C
    # does, never with a traceback nor with the sidecar left saying "running".
    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    figures = []
    try:
        try:
            outcome = run_campaign(camp, run_point, workers=args.workers, cluster=args.cluster, log=log,
                                   stop_requested=stopping.is_set, lost_after_s=args.lost_after)
        except SweepError as exc:
            return error(str(exc))
        except OSError as exc:
            return error(f"cannot write the campaign in {args.out}: {exc.strerror or exc}")
        except KeyboardInterrupt:        # before the campaign's own handling began (reaching the cluster)
            if camp.path.exists():       # a campaign already there says so; a new one has written nothing yet
                camp.doc["status"] = "interrupted"
                camp.save()
            print(f"mmrig sweep: interrupted while starting; run the same command again (or --resume --out "
                  f"{args.out})", file=sys.stderr)
            return EXIT_INTERRUPTED
        if outcome.cluster_lost and not outcome.interrupted:
            print(f"mmrig sweep: cluster lost: {outcome.cluster_lost}; the points done are kept: run the same "
                  f"command again (or --resume --out {args.out}) when it has workers", file=sys.stderr)
        if outcome.interrupted:
            print(f"mmrig sweep: interrupted; the points done are kept: run the same command again (or --resume "
                  f"--out {args.out}) to continue", file=sys.stderr)
        from mmanalysis.sweepplots import write_figures

        try:
            figures = write_figures(args.out)
        except (OSError, ValueError) as exc:
            print(f"mmrig sweep: figures not written: {exc}", file=sys.stderr)
        except KeyboardInterrupt:
            print("mmrig sweep: interrupted while writing the figures (not written); the points are kept",
                  file=sys.stderr)
            outcome.interrupted = True
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    totals = camp.doc.get("totals", {})
    print(f"campaign {args.out}: {totals.get('done')}/{totals.get('points')} points done "
          f"({len(outcome.ran)} run now, {len(outcome.skipped)} already complete), "
          f"{len(outcome.invalid)} invalid, {len(outcome.failed)} failed"
          + (f", {totals['refused']} refused (not run)" if totals.get("refused") else "") + "; "
          f"virtual time {totals.get('virtual_s', 0):.1f} s; status {camp.doc.get('status')}")
    if figures:
        print("wrote " + ", ".join(str(p) for p in [camp.path, *figures]))
    if len(camp.plan.rate) > 1:
        from mmanalysis.sweepplots import highest_clean_rates

        for (baud, d, dispatch, load), c in highest_clean_rates(camp.doc).items():
            best = f"{c.per_s:.1f} events/s ({c.rate})" if c.per_s is not None else "none of the rates"
            above = f"; at {c.next_rate}: {c.why}" if c.next_rate else ""
            print(f"highest clean rate, {baud} baud, distance {d}, {dispatch}, {load}: {best}{above}")
    for name in outcome.invalid:
        print(f"INVALID point (kept, not a result): {name}: {camp.doc['points'][name].get('invalid_reason')}")
    for name in outcome.failed:
        print(f"FAILED point (no run; runs again on --resume): {name}: {camp.doc['points'][name].get('error')}")
    return outcome.exit_code


def add_parser(sub: argparse._SubParsersAction) -> None:
    sweep = sub.add_parser("sweep", help="a campaign: a grid of runs over distance, rate, baud, dispatch, load",
                           description="A campaign: one run per point of the grid (the product of the axes) in one "
                                       "folder, lockstep points in parallel as Dask tasks, paced ones one at a "
                                       "time; resumable.",
                           epilog=SWEEP_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    sweep.add_argument("--distance", "-d", default=None, metavar="D",
                       help="schedule distances, ticks ahead: a range 1..4 or a list 1,2,4")
    interval = sweep.add_mutually_exclusive_group()
    interval.add_argument("--rate", default=None, metavar="RATES",
                          help="tick, Nticks (tick-aligned) or Xms (the free-running timer; a plain number is ms), "
                               "comma-separated (default tick)")
    interval.add_argument("-i", "--interval", default=None, metavar="INTERVALS",
                          help="the same with cyclictest's -i unit: a plain number is us (-i 1000,50000 is --rate "
                               "1ms,50ms), or with a unit (500us, 1ms), or ticks (tick, 2ticks)")
    sweep.add_argument("--baud", default=None, metavar="BAUDS",
                       help="link rates, e.g. 9600,115200 (BAUD after each point's handshake; the nodes refuse one "
                            "their UART cannot make)")
    sweep.add_argument("--dispatch", default=None, metavar="PATHS", help="isr, task or isr,task (default isr)")
    sweep.add_argument("--load", default=None, metavar="LOADS",
                       help="PC load conditions: idle, cpu, memory, disk, network, heavy, all (default idle; "
                            "anything but idle needs --paced)")
    sweep.add_argument("--mode", choices=("mixed", "verification", "normal"), default=None,
                       help="default mixed (normal needs --paced)")
    sweep.add_argument("--count", "-l", type=int, default=None, help="events per point (default 200)")
    sweep.add_argument("--generation", default=None, metavar="free|periodic",
                       help="what an Xms rate runs: free (default: the paper's free-running timer, a SCHEDULE each) or "
                            "periodic (mixed mode: the executor's PERIODIC series, moments inside ticks, up to a "
                            "kilohertz: docs/kilohertz.md)")
    add_profiler_kind_option(sweep)
    sweep.add_argument("--out", "-o", type=Path, required=True, help="the campaign folder")
    sweep.add_argument("--paced", action="store_true",
                       help="points on the paced bench, one at a time (they measure the host); default lockstep")
    where_sweep = sweep.add_mutually_exclusive_group()
    where_sweep.add_argument("--workers", type=int, default=None,
                             help="lockstep: a local Dask cluster of N processes (default the CPU count)")
    where_sweep.add_argument("--cluster", default=None, metavar="tls://HOST:PORT",
                             help="lockstep: a running Dask scheduler whose workers have this mmrig installed; TLS "
                                  "with the credentials of the Dask configuration (docs/campaigns.md, 'Securing a "
                                  "shared cluster'; a tcp:// one is warned about). Default: a local cluster of the "
                                  "user's alone (TLS, a temporary certificate held in memory)")
    sweep.add_argument("--lost-after", type=float, default=10.0, metavar="SECONDS",
                       help="lockstep: end the campaign (exit 4, the points done kept) when the cluster has had no "
                            "worker, or its scheduler has not answered, for this long (default 10)")
    sweep.add_argument("--resume", action="store_true",
                       help="continue the campaign in --out (its own axes unless given); rerunning the same "
                            "command does the same")
    sweep.add_argument("--quiet", "-q", action="store_true", help="no line per point")
    sweep.set_defaults(func=cmd_sweep)
