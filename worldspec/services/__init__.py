"""Services shared by every front end (CLI, synthesis, rollouts, serving).

Loading compiled worlds, validating tasks, writing files atomically, dataset
rows, semantic diffs, the client for OpenAI-compatible model servers
(``model_client``, the one module here that loads ``openai``) and what every front end
that has a model write ``.world`` text shares (the language reference, reading and
repairing a reply, diagnostics for the model, the compile lock). Nothing here imports a
front end.
"""
