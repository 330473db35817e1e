"""Numbers and names the CLI prints: scores x100 with two decimals, counts with thousands separators, the
GSTransform paper by name."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from bench.cli.main import main


def test_top_level_help_names_the_gstransform_paper(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    with pytest.raises(SystemExit):
        main(["--help"])
    out = capsys.readouterr().out
    assert "Feng et al., 2025" in out and "003" not in out


def test_verify_prints_scores_as_every_cli_table_does():
    from bench.cli.commands.leaderboard import verdict_line

    v = SimpleNamespace(
        verified=False,
        task="DemoInstructSTS",
        model="org/m",
        setting="default",
        claimed=-0.105862,
        recomputed=0.99,
        note="main_score differs",
    )
    assert verdict_line(v) == (
        "NOT verified DemoInstructSTS · org/m: claimed -10.59, recomputed 99.00; main_score differs"
    )
    assert "recomputed -;" in verdict_line(SimpleNamespace(**{**vars(v), "recomputed": None, "verified": True}))


def test_dry_run_table_counts_with_thousands_separators():
    from bench.run.dry_run import DryRunEstimate, dry_run_table

    estimates = [
        DryRunEstimate(
            "STSBenchmark",
            1106,
            {
                "texts": 1106,
                "tokens": 123456,
                "tokens_method": "tiktoken",
                "requests": 3,
                "usd": 0.00246912,
                "usd_per_1m_tokens": 0.02,
            },
        ),
        DryRunEstimate(
            "SciFact",
            5183,
            {
                "texts": 5183,
                "tokens": 1_000_000,
                "tokens_method": "tiktoken",
                "requests": 11,
                "usd": 0.02,
                "usd_per_1m_tokens": 0.02,
            },
        ),
    ]
    table = dry_run_table(estimates)
    rows = {
        line.split("|")[1].strip(): [c.strip() for c in line.split("|")[2:-1]]
        for line in table.splitlines()
        if line.startswith("| ") and "---" not in line
    }
    assert rows["STSBenchmark"][:3] == ["1,106", "123,456", "3"]
    assert rows["Total"][:3] == ["6,289", "1,123,456", "14"]
