"""Static leaderboard built from result files (not implemented yet: see the leaderboard issue)."""
