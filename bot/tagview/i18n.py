"""The tag view's page chrome in English and Chinese.

Only the chrome is translated here; a guide's own text stays in the language it
was written in.
"""

from __future__ import annotations

from collections.abc import Mapping

#: Languages the chrome is available in; the first is the default.
LANGUAGES = ("en", "zh")
#: Each language's name written in that language, for the language switch.
LANGUAGE_NAMES = {"en": "English", "zh": "中文"}

_CATALOG: Mapping[str, Mapping[str, str]] = {
    "en": {
        "tag_view": "tag view",
        "guide_title": "#{number} reading guide",
        "repositories": "Repositories",
        "repositories_title": "prguide · tag view",
        "guides_count": "{count} guides",
        "guides_count_one": "1 guide",
        "no_repositories": "No repository has stored guides yet.",
        "hidden_private": "{count} private repositories are hidden; run prguide view with --include-private to show them.",
        "hidden_private_one": "1 private repository is hidden; run prguide view with --include-private to show it.",
        "language": "Language",
        "filters": "Filters",
        "label": "Label",
        "area": "Area",
        "level": "Reading level",
        "any": "Any",
        "min_importance": "Minimum importance (1-10)",
        "from": "Merged on or after",
        "to": "Merged on or before",
        "search": "Search titles and focus points",
        "apply": "Apply filters",
        "clear": "Clear filters",
        "labels_nav": "Labels",
        "section_count": "{count} pull requests",
        "section_count_one": "1 pull request",
        "caption": "Pull requests labelled {label}, newest first",
        "col_number": "Pull request",
        "col_title": "Title",
        "col_importance": "Importance",
        "col_reading": "Reading",
        "col_merged": "Merged",
        "minutes": "{minutes} min",
        "more": "Show all {count} pull requests labelled {label}",
        "showing": "Showing {first}-{last} of {total}",
        "newer": "Newer",
        "older": "Older",
        "no_results": "No merged pull request matches these filters.",
        "unmerged": "not merged",
        "back": "Back to the tag view",
        "all_labels": "All labels",
        "open_on_github": "Open the pull request on GitHub",
        "labels_line": "Labels",
        "importance_line": "Importance",
        "reading_line": "Reading",
        "merged_line": "Merged",
        "level_deep": "deep read",
        "level_quick": "quick read",
        "level_skim": "skim",
        "level_skip": "skip",
        "not_found": "Not found",
        "not_found_text": "There is no such page.",
        "bad_request": "Bad request",
        "unauthorized": "Sign-in required",
        "unauthorized_text": "This tag view needs a view token (Authorization: Bearer).",
        "skip_to_content": "Skip to content",
    },
    "zh": {
        "tag_view": "标签视图",
        "guide_title": "#{number} 阅读指南",
        "repositories": "代码仓库",
        "repositories_title": "prguide · 标签视图",
        "guides_count": "{count} 份指南",
        "guides_count_one": "1 份指南",
        "no_repositories": "还没有任何仓库存有指南。",
        "hidden_private": "有 {count} 个私有仓库未显示；用 prguide view --include-private 启动即可显示。",
        "hidden_private_one": "有 1 个私有仓库未显示；用 prguide view --include-private 启动即可显示。",
        "language": "语言",
        "filters": "筛选",
        "label": "标签",
        "area": "领域",
        "level": "阅读深度",
        "any": "全部",
        "min_importance": "最低重要度（1-10）",
        "from": "合并日期不早于",
        "to": "合并日期不晚于",
        "search": "搜索标题和关注点",
        "apply": "应用筛选",
        "clear": "清除筛选",
        "labels_nav": "标签",
        "section_count": "{count} 个拉取请求",
        "section_count_one": "1 个拉取请求",
        "caption": "带有标签 {label} 的拉取请求，最新的在前",
        "col_number": "拉取请求",
        "col_title": "标题",
        "col_importance": "重要度",
        "col_reading": "阅读",
        "col_merged": "合并日期",
        "minutes": "{minutes} 分钟",
        "more": "查看带有标签 {label} 的全部 {count} 个拉取请求",
        "showing": "第 {first}-{last} 个，共 {total} 个",
        "newer": "较新",
        "older": "较旧",
        "no_results": "没有符合筛选条件的已合并拉取请求。",
        "unmerged": "未合并",
        "back": "返回标签视图",
        "all_labels": "全部标签",
        "open_on_github": "在 GitHub 上打开拉取请求",
        "labels_line": "标签",
        "importance_line": "重要度",
        "reading_line": "阅读",
        "merged_line": "合并日期",
        "level_deep": "精读",
        "level_quick": "快读",
        "level_skim": "略读",
        "level_skip": "可跳过",
        "not_found": "未找到",
        "not_found_text": "没有这个页面。",
        "bad_request": "请求有误",
        "unauthorized": "需要登录",
        "unauthorized_text": "此标签视图需要查看令牌（Authorization: Bearer）。",
        "skip_to_content": "跳到正文",
    },
}


def pick_language(value: str | None, default: str = "en") -> str:
    """``value`` if it is a supported language code (any case), else ``default``."""
    code = (value or "").strip().lower()
    return code if code in LANGUAGES else default


class Messages:
    """The chrome strings of one language: ``messages("more", count=3, label="ci")``.

    Falls back to English for a key a translation lacks; raises :class:`KeyError` for
    a key no language has.
    """

    def __init__(self, lang: str):
        self.lang = pick_language(lang)
        self._table = _CATALOG[self.lang]

    def __call__(self, key: str, **values: object) -> str:
        text = self._table.get(key) or _CATALOG["en"][key]
        return text.format(**values) if values else text

    def count(self, count: int, key: str = "section_count") -> str:
        """"N pull requests" (or another ``key``'s text) with the singular where the language has one."""
        return self(f"{key}_one") if count == 1 else self(key, count=count)

    def level(self, level: str | None) -> str:
        """A reading level's name, or "" for none."""
        return self(f"level_{level}") if level else ""


def catalog_keys(lang: str) -> frozenset[str]:
    """The keys a language's catalog defines (for completeness checks)."""
    return frozenset(_CATALOG[lang])
