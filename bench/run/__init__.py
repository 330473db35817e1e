"""The run: turns RunOptions into scored tasks (runner), and re-runs a submission for
`bench leaderboard verify` through its one entry point (reproduce)."""
