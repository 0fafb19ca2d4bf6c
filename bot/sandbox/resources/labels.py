"""Repository labels, the labels on issues and their ``labeled``/``unlabeled`` events ("Labels", "Issue events").

A mixin of :class:`bot.sandbox.state.SandboxState`: its methods use the state's
core (``repo``, ``now``, ``_new_id``, ``user_json``) and the stores it sets up.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from bot import github_objects as objects
from bot.sandbox.errors import ApiError, not_found, validation_failed
from bot.sandbox.records import (
    ISSUE_LABELS_MAX,
    DEFAULT_LABEL_COLOR,
    DOC_ADD_LABELS,
    DOC_CREATE_LABEL,
    DOC_REMOVE_LABEL,
    DOC_UPDATE_LABEL,
    _HEX6,
    iso,
    Label,
    LABEL_DESCRIPTION_MAX_CHARS,
    LABEL_NAME_MAX_CHARS,
    LabelEvent,
    Repository,
)


class LabelsMixin:
    """Repository labels, the labels on issues and their ``labeled``/``unlabeled`` events."""

    def _repo_labels(self, record: Repository) -> dict[str, Label]:
        return self.labels.setdefault(record.full_name, {})

    def _issue_labels(self, record: Repository, number: int) -> list[Label]:
        known = self._repo_labels(record)
        return [known[key] for key in self.issue_labels.get((record.full_name, number), []) if key in known]

    def _seed_labels(self, record: Repository, number: int) -> None:
        for item in record.pulls[number]["pull"].get("labels") or []:
            label_name = item.get("name") if isinstance(item, Mapping) else item
            if isinstance(label_name, str) and label_name:
                color = item.get("color") if isinstance(item, Mapping) else None
                label = self._get_or_create_label(record, label_name, color or DEFAULT_LABEL_COLOR)
                keys = self.issue_labels.setdefault((record.full_name, number), [])
                if label.name.lower() not in keys:
                    keys.append(label.name.lower())

    def _get_or_create_label(self, record: Repository, label_name: str, color: str = DEFAULT_LABEL_COLOR) -> Label:
        known = self._repo_labels(record)
        key = label_name.lower()
        if key not in known:
            known[key] = Label(self._new_id(), label_name, color)
        return known[key]

    @staticmethod
    def _check_label_name(label_name: Any, documentation_url: str) -> str:
        if not isinstance(label_name, str) or not label_name.strip():
            raise validation_failed("Label", "name", "missing_field", documentation_url)
        if len(label_name) > LABEL_NAME_MAX_CHARS:
            raise validation_failed("Label", "name", "invalid", documentation_url, value=label_name)
        return label_name

    def create_label(self, owner: str, name: str, data: Any) -> Label:
        """Add a repository label ("Create a label").

        ``data`` is ``{"name", "color"?, "description"?}``; 422 when the name is
        missing, over 50 characters or already used (``already_exists``, compared
        case-insensitively), or when ``color`` is not 6 hex digits.
        """
        record = self.repo(owner, name)
        if not isinstance(data, Mapping):
            raise validation_failed("Label", "name", "missing_field", DOC_CREATE_LABEL)
        label_name = self._check_label_name(data.get("name"), DOC_CREATE_LABEL)
        color = self._check_color(data.get("color", DEFAULT_LABEL_COLOR), DOC_CREATE_LABEL)
        known = self._repo_labels(record)
        if label_name.lower() in known:
            raise validation_failed("Label", "name", "already_exists", DOC_CREATE_LABEL)
        description = data.get("description")
        label = Label(self._new_id(), label_name, color, description if isinstance(description, str) else None)
        known[label_name.lower()] = label
        return label

    @staticmethod
    def _check_color(color: Any, documentation_url: str) -> str:
        color = color[1:] if isinstance(color, str) and color.startswith("#") else color
        if not isinstance(color, str) or not _HEX6.match(color):
            raise validation_failed("Label", "color", "invalid", documentation_url)
        return color.lower()

    def update_label(self, owner: str, name: str, label_name: str, data: Any) -> Label:
        """Change a repository label's name, colour or description ("Update a label").

        ``data`` is ``{"new_name"?, "color"?, "description"?}``; fields left out keep
        their value, and a renamed label stays on the issues that carry it. 404 when
        the label does not exist; 422 (nothing changed) for a colour that is not 6
        hex digits, a description over 100 characters, or a ``new_name`` that is
        empty, over 50 characters or another label's (``already_exists``).
        """
        record = self.repo(owner, name)
        known = self._repo_labels(record)
        found = known.get(label_name.lower())
        if found is None:
            raise not_found(DOC_UPDATE_LABEL)
        if not isinstance(data, Mapping):
            raise validation_failed("Label", "name", "invalid", DOC_UPDATE_LABEL)
        new_name = self._check_label_name(data.get("new_name", found.name), DOC_UPDATE_LABEL)
        old_key, new_key = found.name.lower(), new_name.lower()
        if new_key != old_key and new_key in known:
            raise validation_failed("Label", "name", "already_exists", DOC_UPDATE_LABEL)
        color = self._check_color(data.get("color", found.color), DOC_UPDATE_LABEL)
        description = data.get("description", found.description)
        if description is not None and (
            not isinstance(description, str) or len(description) > LABEL_DESCRIPTION_MAX_CHARS
        ):
            raise validation_failed("Label", "description", "invalid", DOC_UPDATE_LABEL)
        if new_key != old_key:
            self.labels[record.full_name] = {(new_key if k == old_key else k): v for k, v in known.items()}
            for (repo, _number), keys in self.issue_labels.items():
                if repo == record.full_name and old_key in keys:
                    keys[keys.index(old_key)] = new_key
        found.name, found.color, found.description = new_name, color, description
        return found

    def label(self, owner: str, name: str, label_name: str) -> Label:
        """Return a repository label by name, case-insensitively ("Get a label"); 404 otherwise."""
        found = self._repo_labels(self.repo(owner, name)).get(label_name.lower())
        if found is None:
            raise not_found("https://docs.github.com/rest/issues/labels#get-a-label")
        return found

    def repo_labels(self, owner: str, name: str) -> list[Label]:
        """A repository's labels in creation order ("List labels for a repository")."""
        return list(self._repo_labels(self.repo(owner, name)).values())

    def labels_on(self, owner: str, name: str, number: int) -> list[Label]:
        """An issue's labels ("List labels for an issue"); 404 for an unknown issue."""
        return self._issue_labels(self._issue(owner, name, number), number)

    @staticmethod
    def _label_names(data: Any) -> list[Any]:
        if isinstance(data, Mapping):
            data = data.get("labels")
        if not isinstance(data, list):
            raise validation_failed("Label", "labels", "invalid", DOC_ADD_LABELS)
        return [item.get("name") if isinstance(item, Mapping) else item for item in data]

    def add_labels(
        self,
        owner: str,
        name: str,
        number: int,
        data: Any,
        *,
        replace: bool = False,
        actor: str | None = None,
        actor_type: str = "User",
    ) -> list[Label]:
        """Add labels to an issue, creating unknown ones ("Add labels to an issue").

        ``data`` is ``{"labels": [names]}`` or a bare list of names. With
        ``replace`` the issue's labels become exactly these ("Set labels for an
        issue"). Each label put on or taken off is recorded as a ``labeled`` or
        ``unlabeled`` event by ``actor`` (no event without an actor). Returns the
        issue's labels; 404 unknown issue, 422 bad name.
        """
        record = self._issue(owner, name, number)
        names = [self._check_label_name(n, DOC_ADD_LABELS) for n in self._label_names(data)]
        before = list(self.issue_labels.get((record.full_name, number), []))
        keys = [] if replace else list(before)
        for label_name in dict.fromkeys(names):
            if label_name.lower() not in keys:
                keys.append(label_name.lower())
        if len(keys) > ISSUE_LABELS_MAX:
            # Checked before any label is created: GitHub changes nothing.
            raise validation_failed(
                "Issue", "labels", "custom", DOC_ADD_LABELS, f"Issues cannot have more than {ISSUE_LABELS_MAX} labels"
            )
        for label_name in names:
            self._get_or_create_label(record, label_name)
        self.issue_labels[(record.full_name, number)] = keys
        if actor:
            for key in before:
                if key not in keys:
                    self._record_label_event(record, number, "unlabeled", key, actor, actor_type)
            for key in keys:
                if key not in before:
                    self._record_label_event(record, number, "labeled", key, actor, actor_type)
        return self._issue_labels(record, number)

    def remove_label(
        self, owner: str, name: str, number: int, label_name: str, *, actor: str | None = None, actor_type: str = "User"
    ) -> list[Label]:
        """Take one label off an issue ("Remove a label from an issue").

        Recorded as an ``unlabeled`` event by ``actor`` when one is given. Returns
        the labels left; 404 ``Label does not exist`` when it is not on the issue.
        """
        record = self._issue(owner, name, number)
        keys = self.issue_labels.get((record.full_name, number), [])
        if label_name.lower() not in keys:
            raise ApiError(404, "Label does not exist", documentation_url=DOC_REMOVE_LABEL)
        keys.remove(label_name.lower())
        if actor:
            self._record_label_event(record, number, "unlabeled", label_name.lower(), actor, actor_type)
        return self._issue_labels(record, number)

    def change_labels(
        self,
        owner: str,
        name: str,
        number: int,
        *,
        actor: str,
        add: Iterable[str] = (),
        remove: Iterable[str] = (),
        actor_type: str = "User",
    ) -> list[Label]:
        """Remove, then add, labels on an issue as ``actor``, recording each change as an issue event.

        What a person does from the pull request's sidebar. Checks everything
        first, so a bad request changes nothing: 404 for an unknown issue or a
        label to remove that is not on it, 422 for a bad name to add.
        """
        record = self._issue(owner, name, number)
        adding = [self._check_label_name(n, DOC_ADD_LABELS) for n in add]
        removing = list(remove)
        on_issue = self.issue_labels.get((record.full_name, number), [])
        for label_name in removing:
            if not isinstance(label_name, str) or label_name.lower() not in on_issue:
                raise ApiError(404, "Label does not exist", documentation_url=DOC_REMOVE_LABEL)
        for label_name in dict.fromkeys(n.lower() for n in removing):
            self.remove_label(owner, name, number, label_name, actor=actor, actor_type=actor_type)
        return self.add_labels(owner, name, number, adding, actor=actor, actor_type=actor_type)

    def _record_label_event(
        self, record: Repository, number: int, event: str, key: str, actor: str, actor_type: str
    ) -> None:
        label = self._repo_labels(record)[key]
        self.label_events.append(
            LabelEvent(
                self._new_id(), record.full_name, number, event, actor, actor_type, label.name, label.color, self.now()
            )
        )

    def events_on(self, owner: str, name: str, number: int) -> list[LabelEvent]:
        """An issue's ``labeled``/``unlabeled`` events, oldest first ("List issue events"); 404 unknown issue.

        Labels a pull request bundle arrives with have no events: they were there before.
        """
        record = self._issue(owner, name, number)
        return [e for e in self.label_events if e.repo == record.full_name and e.number == number]

    def event_json(self, event: LabelEvent) -> dict[str, Any]:
        """An issue event object as "List issue events" returns it (``labeled-issue-event`` shape).

        A change the app's bot user made names the app in ``performed_via_github_app``, as GitHub does.
        """
        by_app = event.actor_type == "Bot" and event.actor.lower() == self.bot_login.lower()
        kind = "LabeledEvent" if event.event == "labeled" else "UnlabeledEvent"
        return {
            "id": event.id,
            "node_id": objects.node_id(kind, event.id),
            "url": f"{self.api_url}/repos/{event.repo}/issues/events/{event.id}",
            "actor": self.user_json(event.actor, event.actor_type),
            "event": event.event,
            "commit_id": None,
            "commit_url": None,
            "created_at": iso(event.created_at),
            "label": {"name": event.label_name, "color": event.label_color},
            "performed_via_github_app": self.app_json() if by_app else None,
        }

    def label_json(self, record: Repository, label: Label) -> dict[str, Any]:
        """A label object as GitHub returns it (the ``label`` schema)."""
        return objects.label(label.id, label.name, label.color, label.description, record.full_name, site=self.site)
