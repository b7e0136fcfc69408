"""Services shared by every front end (CLI, synthesis, rollouts, serving).

Loading compiled worlds, validating tasks, writing files atomically, dataset
rows and semantic diffs. Nothing here imports a front end.
"""
