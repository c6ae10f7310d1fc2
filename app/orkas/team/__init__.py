"""The group chat: a commander hosts every conversation and agents are members with their own voice.

`agents.py` (AGENT.md files), `bus.py` (the conversation's canonical log), `state.py` (the floor and the
task log), `handback.py` (the exact hand-back marker), `tools.py` (dispatch_to, run_worker, hand_off_to,
create_agent), `group.py` (the group: members, transcripts, caps), `turn.py` (one person's message through
the group: routing, slices, actor-tagged events), `migrate.py` and `conversations.py` (the app's
conversations as groups). The engine's run loop runs every actor; nothing here forks it.
"""
