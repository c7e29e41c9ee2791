"""``mnemo hook <event>``: Claude Code's hooks, answered from a Mnemo server.

Claude Code starts this command once per event, a cold process each time, writes the event's JSON
on stdin and reads the answer on stdout (docs/agents.md):

* ``SessionStart`` -- a budgeted ``recall_context`` of the working directory's project (the
  project is named after the git remote's repository, or the folder; created on first use),
  saying where it came from and how to search more;
* ``UserPromptSubmit`` -- only the memories the prompt's meaning is near enough (a cosine over a
  measured threshold), within a small token budget; nothing for an unrelated prompt;
* ``PreCompact`` and ``Stop`` -- once per session each, an instruction to save what the session
  decided with ``memory_add`` (search first); never on a Stop that a Stop hook already continued.

Memory stays explicit: the hooks read what is saved and nudge the agent; they never save.

It fails open: a server that is down, slow, refusing or answering nonsense costs the session
nothing -- no output, one line on stderr, exit 0, within the hook's own deadline. The module uses
the standard library only (no pydantic, no service): a hook's cold start is paid on every prompt.

Its settings (``MNEMO_URL``, ``MNEMO_KEY``, ``MNEMO_PROJECT``, ``MNEMO_HOOK_*``; Claude Code passes
its environment to hooks) are declared in :mod:`mnemo.clientconfig`, the standard-library part of
``mnemo.config.Settings``, and listed in docs/configuration.md.
"""
