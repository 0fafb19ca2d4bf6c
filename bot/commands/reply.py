"""Wording prguide's reply to a comment's commands: help, refusals, the preview note.

Pure. Whatever the commenter typed is quoted back as a code span, and their login
is shown without pinging them (:mod:`bot.engine.render.sanitize`).
"""

from __future__ import annotations

from collections.abc import Sequence

from bot.commands.decide import Refuse
from bot.commands.messages import HELP_KEYS, LIST_SEP, USAGE, t
from bot.commands.parse import COMMANDS
from bot.engine.render import sanitize


def help_text(lang: str, *, authors_relabel: bool = False) -> str:
    """The list of commands, with who may use them."""
    lines = [f"**{t('cmd.help.title', lang)}**", ""]
    for name in COMMANDS:
        lines.append(f"- {sanitize.code(USAGE[name])}: {t(HELP_KEYS[name], lang)}")
    lines += ["", t("cmd.help.who_authors", lang) if authors_relabel else t("cmd.help.who", lang)]
    return "\n".join(lines)


def refusal_text(refusal: Refuse, lang: str) -> str:
    """Why one command did not run, and its usage (all commands' usage for an unknown one)."""
    command = refusal.command
    shown = f"/prguide {command.text}".strip()
    reason = t(refusal.reason, lang, refusal.params)
    lines = [f"- {t('cmd.reply.failed', lang, {'command': shown, 'reason': reason})}"]
    if refusal.reason.startswith("cmd.err."):
        usage = [USAGE[command.name]] if command.name in USAGE else [USAGE[name] for name in COMMANDS]
        lines.append(f"  - {t('cmd.reply.usage', lang, {'usage': usage[0]})}")
        if len(usage) > 1:
            lines[-1] += LIST_SEP[lang] + LIST_SEP[lang].join(sanitize.code(u) for u in usage[1:])
    return "\n".join(lines)


def compose_reply(login: str, sections: Sequence[str], lang: str) -> str:
    """One reply comment: the commenter's name (not pinged), then ``sections`` apart."""
    head = t("cmd.reply.to", lang, {"user": sanitize.login(login)})
    return "\n\n".join([head, *[s for s in sections if s]])
