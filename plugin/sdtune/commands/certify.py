"""`sdtune certify`, `sdtune infer` and `sdtune results`."""

import argparse

from .base import Env, json_output

COMMANDS = ("certify", "infer", "results")


def add_parser(sub, name: str) -> None:
    if name == "certify":
        cert = sub.add_parser("certify", help="measure SSDs (destroys "
                              "their data) and decide native sector size, "
                              "cache and queue depth")
        cert.add_argument("targets", nargs="+", metavar="DISK|PATH")
        cert.add_argument("--confirm", nargs="+", action="extend",
                          default=[], metavar="DISK|PATH", required=True,
                          help="repeat every target: its data will be lost")
        json_output(cert)
        cert.add_argument("--trust-flush-timing", action="store_true",
                          help="allow cache-nonvolatile from flush timing "
                          "alone, without the drive's NV_SUP evidence")
        cert.add_argument("--logical-block", type=int, metavar="BYTES",
                          help="logical block size of a file target")
    elif name == "infer":
        infer = sub.add_parser("infer", help="the certify verdict from "
                               "existing vdbench or fio output, without I/O")
        infer.add_argument("--from", dest="source", required=True,
                           metavar="FILE")
        infer.add_argument("--format", choices=("vdbench", "fio"))
        json_output(infer)
        infer.add_argument("--trust-flush-timing", action="store_true")
    else:
        results = sub.add_parser("results",
                                 help="stored certification records")
        results.add_argument("-H", dest="scripted", action="store_true")
        json_output(results)


def run(args: argparse.Namespace, env: Env) -> int:
    from ..certify import command as cc
    as_json = args.output == "json"
    if args.command == "results":
        return cc.cmd_results(env.host, env.cfg.state_dir, env.out, as_json,
                              args.scripted)
    if args.command == "infer":
        text = env.host.read_bytes(args.source).decode("utf-8", "replace")
        return cc.cmd_infer(args.source, args.format, text, env.out,
                            as_json, args.trust_flush_timing)
    return cc.cmd_certify(env.host, env.cfg.state_dir, env.cfg.certify(),
                          args.targets, args.confirm, env.out, env.err,
                          as_json, args.trust_flush_timing,
                          args.logical_block)
