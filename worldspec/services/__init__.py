"""Services shared by every front end (CLI, synthesis, rollouts, serving).

Loading compiled worlds, validating tasks, writing files atomically, dataset
rows, semantic diffs and the client for OpenAI-compatible model servers
(``model_client``, the one module here that loads ``openai``). Nothing here imports a
front end.
"""
