"""Every sentence prguide says in reply to a command, in English and Chinese.

Same conventions as :mod:`bot.render.messages`: parameters pass through
:func:`bot.render.messages.format_params`, so a label name or a command line quoted
back is a code span and a login never pings anyone.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from bot.render import sanitize
from bot.render.messages import MESSAGES as GUIDE_MESSAGES
from bot.render.messages import format_params

MESSAGES: dict[str, dict[str, str]] = {
    # the reply's frame
    "cmd.reply.to": {"en": "{user}:", "zh": "{user}："},
    "cmd.reply.failed": {"en": "{command} did not run: {reason}", "zh": "{command} 没有执行：{reason}"},
    "cmd.reply.usage": {"en": "Usage: {usage}", "zh": "用法：{usage}"},
    "cmd.reply.done": {"en": "Done: {names}.", "zh": "已完成：{names}。"},
    "cmd.reply.preview": {
        "en": "This pull request is not merged yet, so the guide is a preview; it is rebuilt when the pull request is merged.",
        "zh": "此 PR 尚未合并，当前指南只是预览；合并后会重新生成。",
    },
    # help
    "cmd.help.title": {"en": "prguide commands (comment one per line):", "zh": "prguide 命令（每行一条，写在评论里）："},
    "cmd.help.refresh": {"en": "rebuild the guide from the pull request as it is now", "zh": "按 PR 当前状态重新生成指南"},
    "cmd.help.lang": {"en": "write the guide in English or Chinese, and keep that language for this PR", "zh": "用英文或中文重写指南，并为此 PR 记住该语言"},
    "cmd.help.label_add": {"en": "add labels and keep them on, whatever the rules say", "zh": "添加标签，之后规则不会再去掉它们"},
    "cmd.help.label_remove": {"en": "remove labels and keep them off, whatever the rules say", "zh": "移除标签，之后规则不会再加回来"},
    "cmd.help.why": {"en": "explain which rules and factors gave the labels and the score", "zh": "说明标签和评分来自哪些规则与因素"},
    "cmd.help.help": {"en": "show this list", "zh": "显示本列表"},
    "cmd.help.who": {
        "en": "Anyone may ask for help and why; the PR author may also refresh and change the language; people with write access may do everything. Names with spaces go in double quotes.",
        "zh": "任何人都可以使用 help 和 why；PR 作者还可以使用 refresh 和 lang；有写权限的人可以使用全部命令。含空格的标签名请用双引号括起来。",
    },
    "cmd.help.who_authors": {
        "en": "Anyone may ask for help and why; the PR author may also refresh, change the language and relabel; people with write access may do everything. Names with spaces go in double quotes.",
        "zh": "任何人都可以使用 help 和 why；PR 作者还可以使用 refresh、lang 和 label；有写权限的人可以使用全部命令。含空格的标签名请用双引号括起来。",
    },
    # why
    "cmd.why.title": {"en": "Why this guide says what it says:", "zh": "指南结论的依据："},
    "cmd.why.title_label": {"en": "Why {label}:", "zh": "{label} 的依据："},
    "cmd.why.labels": {"en": "Labels", "zh": "标签"},
    "cmd.why.no_labels": {"en": "No rule gave this pull request a label.", "zh": "没有规则给此 PR 打标签。"},
    "cmd.why.by_rule": {"en": "{label} ← rule {rule} ({source})", "zh": "{label} ← 规则 {rule}（{source}）"},
    "cmd.why.by_human": {"en": "{label} ← added by a maintainer with a command", "zh": "{label} ← 由维护者用命令添加"},
    "cmd.why.removed": {"en": "{label} was removed by a maintainer with a command and is kept off.", "zh": "{label} 已被维护者用命令移除，不会再自动添加。"},
    "cmd.why.not_applied": {
        "en": "{label} is not among this guide's labels; the labels are: {labels}.",
        "zh": "{label} 不在本指南的标签中；现有标签：{labels}。",
    },
    "cmd.why.not_applied_none": {"en": "{label} is not among this guide's labels; it has none.", "zh": "{label} 不在本指南的标签中；本指南没有标签。"},
    "cmd.why.condition": {"en": "condition: {condition}", "zh": "条件：{condition}"},
    "cmd.why.rules": {"en": "Rules that matched", "zh": "命中的规则"},
    "cmd.why.rule": {"en": "rule {rule} ({source})", "zh": "规则 {rule}（{source}）"},
    "cmd.why.no_rules": {"en": "No rule matched.", "zh": "没有命中任何规则。"},
    "cmd.why.score": {"en": "Importance {importance}/10, from these factors:", "zh": "重要度 {importance}/10，由以下因素构成："},
    "cmd.why.factor": {"en": "{points}: {reason}", "zh": "{points}：{reason}"},
    "cmd.why.clamped": {"en": "(the sum is kept between 1 and 10)", "zh": "（总分限制在 1 到 10 之间）"},
    # refusals: who may do what
    "cmd.deny.label": {
        "en": "only people with write access to this repository may change labels",
        "zh": "只有对本仓库有写权限的人可以修改标签",
    },
    "cmd.deny.label_authors": {
        "en": "only the pull request's author and people with write access may change labels",
        "zh": "只有 PR 作者和对本仓库有写权限的人可以修改标签",
    },
    "cmd.deny.author": {
        "en": "only the pull request's author and people with write access may do this",
        "zh": "只有 PR 作者和对本仓库有写权限的人可以执行此命令",
    },
    "cmd.deny.closed": {
        "en": "this pull request was closed without being merged, so it gets no guide",
        "zh": "此 PR 未合并就被关闭了，不会生成指南",
    },
    # refusals: what was wrong with the command
    "cmd.err.unknown": {"en": "there is no command {value}", "zh": "没有 {value} 这个命令"},
    "cmd.err.too_long": {"en": "a command line may be at most {limit} characters; split it into several lines", "zh": "一行命令最多 {limit} 个字符；请拆成多行"},
    "cmd.err.empty": {"en": "no command was given", "zh": "没有写命令"},
    "cmd.err.quote": {"en": "a double quote is not closed", "zh": "双引号没有闭合"},
    "cmd.err.no_args": {"en": "{command} takes no arguments", "zh": "{command} 不接受参数"},
    "cmd.err.lang_arity": {"en": "give exactly one language: en or zh", "zh": "请给出一种语言：en 或 zh"},
    "cmd.err.lang_unknown": {"en": "{value} is not a language prguide writes; use en or zh", "zh": "prguide 不支持语言 {value}；请用 en 或 zh"},
    "cmd.err.why_arity": {
        "en": "give at most one label; put a name with spaces in double quotes",
        "zh": "最多给出一个标签；含空格的名字请用双引号括起来",
    },
    "cmd.err.label_action": {"en": "say label add or label remove", "zh": "请写 label add 或 label remove"},
    "cmd.err.label_none": {"en": "give at least one label name after {command}", "zh": "{command} 后面至少要写一个标签名"},
    "cmd.err.label_empty": {"en": "a label name cannot be empty", "zh": "标签名不能为空"},
    "cmd.err.label_long": {"en": "label {value} is longer than GitHub's {limit} characters", "zh": "标签 {value} 超过了 GitHub 的 {limit} 个字符上限"},
    "cmd.err.label_control": {"en": "label {value} contains control characters", "zh": "标签 {value} 含有控制字符"},
    "cmd.err.label_comma": {"en": "label {value} contains a comma, which GitHub label names cannot hold", "zh": "标签 {value} 含有逗号，GitHub 标签名不能包含逗号"},
    "cmd.err.too_many": {
        "en": "one comment may hold at most {limit} commands; {count} more were ignored",
        "zh": "一条评论最多包含 {limit} 条命令；其余 {count} 条已忽略",
    },
    "cmd.err.too_many.one": {
        "en": "one comment may hold at most {limit} commands; 1 more was ignored",
        "zh": "一条评论最多包含 {limit} 条命令；其余 1 条已忽略",
    },
    # failures while acting
    "cmd.reply.action_failed": {"en": "{action} failed: {reason}", "zh": "{action}失败：{reason}"},
    "cmd.act.labels": {"en": "Changing the labels", "zh": "修改标签"},
    "cmd.act.rebuild": {"en": "Rebuilding the guide", "zh": "重新生成指南"},
    "cmd.act.why": {"en": "Explaining the guide", "zh": "解释指南"},
    "cmd.act.help": {"en": "Showing help", "zh": "显示帮助"},
    "cmd.fail.github": {"en": "GitHub refused the change ({status}: {text})", "zh": "GitHub 拒绝了该操作（{status}：{text}）"},
    "cmd.fail.gone": {"en": "GitHub no longer has this pull request or label ({text})", "zh": "GitHub 上已找不到此 PR 或标签（{text}）"},
    "cmd.fail.internal": {
        "en": "prguide hit an internal error; the people running prguide can find it in its log",
        "zh": "prguide 内部出错；运行 prguide 的人可以在日志中查到原因",
    },
}

#: How list items are joined in a sentence, by language.
LIST_SEP: Mapping[str, str] = {lang: GUIDE_MESSAGES["list.and"][lang] for lang in ("en", "zh")}

#: The usage line of each command, shown with a refusal and by ``/prguide help``.
USAGE: Mapping[str, str] = {
    "refresh": "/prguide refresh",
    "lang": "/prguide lang zh|en",
    "label add": '/prguide label add NAME... ("quoted name" for spaces)',
    "label remove": "/prguide label remove NAME...",
    "why": "/prguide why [LABEL]",
    "help": "/prguide help",
}

#: Message key of each command's line in ``/prguide help``.
HELP_KEYS: Mapping[str, str] = {
    "refresh": "cmd.help.refresh",
    "lang": "cmd.help.lang",
    "label add": "cmd.help.label_add",
    "label remove": "cmd.help.label_remove",
    "why": "cmd.help.why",
    "help": "cmd.help.help",
}

#: Parameters that hold text someone typed; they are quoted back as code spans.
_TYPED = {"value", "command", "label", "source", "usage", "condition"}


def t(key: str, lang: str, params: Mapping[str, Any] | None = None) -> str:
    """The reply message ``key`` in ``lang`` (``"en"``/``"zh"``) with ``params`` made safe.

    A ``KEY.one`` form is used when ``params["count"]`` is 1. Typed text (``value``,
    ``command``, ``label``, ``source``, ``usage``, ``condition``) becomes a code span and ``labels`` a
    list of them; ``user`` must already be safe (see :func:`bot.render.sanitize.login`);
    the rest goes through :func:`bot.render.messages.format_params`. Raises
    ``KeyError`` for an unknown key.
    """
    if params and params.get("count") == 1 and f"{key}.one" in MESSAGES:
        key = f"{key}.one"
    template = MESSAGES[key][lang]
    if not params:
        return template
    values = format_params(lang, {k: v for k, v in params.items() if k not in _TYPED and k not in ("user", "labels")})
    for name in _TYPED & params.keys():
        values[name] = sanitize.code(str(params[name]))
    if "labels" in params:
        values["labels"] = LIST_SEP[lang].join(sanitize.code(str(v)) for v in params["labels"])
    if "user" in params:
        values["user"] = params["user"]
    return template.format(**values)
