"""The offline optimum: the most completions any schedule reaches on an episode, known in full."""
