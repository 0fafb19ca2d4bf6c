"""The GitHub App's settings, read once from the environment at start-up.

Every problem is collected and reported together, so an operator fixes a broken
deployment in one pass instead of one variable per restart.
"""

from __future__ import annotations

import ipaddress
import logging
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from bot.engine.rules.model import LANGUAGES

DEFAULT_API_URL = "https://api.github.com"
DEFAULT_PORT = 8080
DEFAULT_HOST = "0.0.0.0"
DEFAULT_DB = "prguide.db"
DEFAULT_WORKERS = 4
MAX_WORKERS = 64
#: ``prguide serve --role``: what a replica does.
ROLES = ("all", "web", "worker")
#: Reconcile passes (merges whose webhook never came) run hourly per installation by default.
DEFAULT_RECONCILE_INTERVAL = 3600
#: A reconcile pass reaches back to where the last completed one started, but never more
#: than this (seconds): a week covers a weekend or a holiday's outage; anything older is
#: backfill's (``/prguide backfill``), which stores guides without commenting.
DEFAULT_RECONCILE_MAX_LOOKBACK = 7 * 86400
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
#: A shorter admin token could be guessed by anyone who can reach the server.
MIN_ADMIN_TOKEN_CHARS = 16

_PEM_RE = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.+-----END [A-Z ]*PRIVATE KEY-----", re.DOTALL)


class SettingsError(ValueError):
    """Raised by :func:`from_env` when the environment is unusable.

    ``problems`` lists every finding, one sentence each, naming the variable.
    """

    def __init__(self, problems: list[str]):
        self.problems = list(problems)
        lines = "\n".join(f"  - {p}" for p in self.problems)
        super().__init__(f"prguide cannot start; fix these settings:\n{lines}")


@dataclass(frozen=True, slots=True)
class Settings:
    """What the server needs to run, validated.

    ``app_id``: the GitHub App's id (App settings page, "About"). ``private_key``: the
    App's PEM private key text, used to sign JWTs ("Generating a JSON Web Token (JWT) for
    a GitHub App"). ``webhook_secret``: the secret GitHub signs deliveries with
    ("Validating webhook deliveries"). ``api_url``: REST API root without a trailing
    slash (GitHub Enterprise Server: ``https://HOST/api/v3``). ``rules``: extra rule
    files/folders applied to every repository on top of the shipped defaults.
    ``lang``: ``"en"`` or ``"zh"``. ``db_path``: the SQLite database (job queue, tag view); its folder is created on first use.
    ``workers``: concurrent jobs. ``view_token``: when set, the tag view asks for it.
    ``admin_token``: when set, the job admin routes (``/admin/jobs``) accept it as a
    bearer token; when unset they are off. ``public_url``: the address readers reach
    prguide at (``https://prguide.example.com``, no trailing ``/``), used for every
    absolute link of the tag view and for the guide comment's link to its page;
    ``trusted_proxies``: peers whose ``Forwarded``/``X-Forwarded-*`` headers are believed.

    The key, secret and tokens never appear in ``repr``.
    """

    app_id: int
    private_key: str = field(repr=False)
    webhook_secret: str = field(repr=False)
    api_url: str = DEFAULT_API_URL
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    rules: tuple[Path, ...] = ()
    lang: str = "en"
    db_path: Path = Path(DEFAULT_DB)
    workers: int = DEFAULT_WORKERS
    view_token: str | None = field(default=None, repr=False)
    log_level: str = "INFO"
    admin_token: str | None = field(default=None, repr=False)
    #: ``postgresql://...``: jobs and shared state live in PostgreSQL (several replicas); None: SQLite at ``db_path``.
    database_url: str | None = field(default=None, repr=False)
    #: The PostgreSQL schema prguide's tables live in (None: the URL's ``search_path``, else ``public``).
    database_schema: str | None = None
    #: Connections each replica's pool keeps open at least / at most. The least is what a burst
    #: of deliveries takes with the default four workers (their jobs, the intake, the
    #: heartbeat): a connection opened during one costs the database server 15-20 ms of CPU
    #: (its start, then its first plans and catalog reads), and the pool closes those above
    #: its least after ten idle minutes, so a smaller least paid that again for every burst
    #: after a quiet spell. Lent in turn, the kept ones stay warm.
    db_pool_min: int = 6
    db_pool_max: int = 10
    #: Seconds a caller waits for a free pooled connection before the request fails (503).
    db_pool_timeout: float = 10.0
    #: Seconds a claimed job stays its replica's without a heartbeat; after that another replica takes it over.
    job_lease: float = 30.0
    #: ``web`` (take deliveries, serve the tag view), ``worker`` (run jobs) or ``all``.
    role: str = "all"
    #: Seconds between two reconcile passes per installation (``PRGUIDE_RECONCILE_INTERVAL``); 0 turns them off.
    reconcile_interval: int = DEFAULT_RECONCILE_INTERVAL
    #: Seconds a reconcile pass reaches back at most (``PRGUIDE_RECONCILE_MAX_LOOKBACK``).
    reconcile_max_lookback: int = DEFAULT_RECONCILE_MAX_LOOKBACK
    #: The narrator's OpenAI-compatible server (``PRGUIDE_LLM_URL``, e.g. ``http://127.0.0.1:8000/v1``); ``None``: off.
    llm_url: str | None = None
    #: The model's name on that server (``PRGUIDE_LLM_MODEL``).
    llm_model: str = ""
    #: ``PRGUIDE_LLM_API_KEY``; never logged, never in ``repr``.
    llm_api_key: str | None = field(default=None, repr=False)
    #: Seconds the narrated guide may take before the engine's guide simply stays (``PRGUIDE_LLM_TIMEOUT``).
    llm_timeout: int = 60
    #: Prompt tokens per guide (``PRGUIDE_LLM_BUDGET``).
    llm_budget: int = 3000
    #: Tokens per installation per UTC day (``PRGUIDE_LLM_DAILY_TOKENS``); 0: no cap.
    llm_daily_tokens: int = 0
    #: Where readers reach prguide (``PRGUIDE_PUBLIC_URL``): scheme, host and any path prefix, no trailing ``/``.
    public_url: str | None = None
    #: Proxies whose forwarded scheme and host are believed (``PRGUIDE_TRUSTED_PROXIES``): addresses or networks.
    trusted_proxies: tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...] = ()

    @property
    def backend(self) -> str:
        """``"postgresql"`` when :attr:`database_url` is set, else ``"sqlite"``."""
        return "postgresql" if self.database_url else "sqlite"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Same as the module's :func:`from_env`."""
        return from_env(environ)

    @property
    def log_level_number(self) -> int:
        """``log_level`` as a :mod:`logging` level number."""
        return logging.getLevelName(self.log_level)


def from_env(environ: Mapping[str, str] | None = None) -> Settings:
    """Read and validate :class:`Settings` from ``environ`` (default :data:`os.environ`).

    Variables: ``GITHUB_APP_ID``, ``GITHUB_PRIVATE_KEY`` (PEM text; ``\\n`` escapes are
    turned into newlines) or ``GITHUB_PRIVATE_KEY_PATH``, ``GITHUB_WEBHOOK_SECRET``,
    ``GITHUB_API_URL``, ``HOST``, ``PORT``, ``PRGUIDE_RULES`` (files/folders separated by
    ``os.pathsep`` or commas), ``PRGUIDE_LANG``, ``PRGUIDE_DB``, ``PRGUIDE_WORKERS``,
    ``PRGUIDE_VIEW_TOKEN``, ``PRGUIDE_LOG_LEVEL``, ``PRGUIDE_ADMIN_TOKEN``,
    ``PRGUIDE_DATABASE_URL`` (``postgresql://...``), ``PRGUIDE_DATABASE_SCHEMA``,
    ``PRGUIDE_DB_POOL_MIN``/``PRGUIDE_DB_POOL_MAX`` (connections), ``PRGUIDE_DB_POOL_TIMEOUT``
    and ``PRGUIDE_JOB_LEASE`` (seconds), ``PRGUIDE_ROLE``,
    ``PRGUIDE_RECONCILE_INTERVAL`` (seconds, 0 = off, else at least 60),
    ``PRGUIDE_RECONCILE_MAX_LOOKBACK`` (seconds, at least two intervals), the narrator's
    ``PRGUIDE_LLM_URL``, ``PRGUIDE_LLM_MODEL``, ``PRGUIDE_LLM_API_KEY``, ``PRGUIDE_LLM_TIMEOUT``
    (seconds), ``PRGUIDE_LLM_BUDGET`` (prompt tokens per guide), ``PRGUIDE_LLM_DAILY_TOKENS``,
    ``PRGUIDE_PUBLIC_URL`` (an http(s) URL) and ``PRGUIDE_TRUSTED_PROXIES`` (IP addresses or
    networks, separated by commas or spaces). Empty values count as unset.

    Raises :class:`SettingsError` listing every problem found.
    """
    env = os.environ if environ is None else environ
    problems: list[str] = []

    def get(name: str) -> str | None:
        value = env.get(name)
        if value is None:
            return None
        value = value.strip()
        return value or None

    app_id = _int(get("GITHUB_APP_ID"), "GITHUB_APP_ID", problems, low=1, required=True)
    private_key = _private_key(get("GITHUB_PRIVATE_KEY"), get("GITHUB_PRIVATE_KEY_PATH"), problems)

    # Only one trailing line break is taken off (what `echo`, editors and secret files add);
    # anything else stays, since the secret must match GitHub's byte for byte.
    secret = strip_line_break(env.get("GITHUB_WEBHOOK_SECRET") or "")
    if not secret:
        problems.append(
            "GITHUB_WEBHOOK_SECRET is not set: prguide refuses to accept unsigned deliveries "
            "(use the secret from the App's webhook settings)"
        )

    api_url = (get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/")
    parts = urlsplit(api_url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        problems.append(f"GITHUB_API_URL must be an http(s) URL such as {DEFAULT_API_URL}, got {api_url!r}")

    port = _int(get("PORT"), "PORT", problems, low=0, high=65535, default=DEFAULT_PORT)
    host = get("HOST") or DEFAULT_HOST

    rules: list[Path] = []
    for item in re.split(rf"[,{re.escape(os.pathsep)}]", get("PRGUIDE_RULES") or ""):
        item = item.strip()
        if not item:
            continue
        path = Path(item).expanduser()
        if not path.exists():
            problems.append(f"PRGUIDE_RULES: no such rule file or folder: {item}")
        rules.append(path)

    lang = (get("PRGUIDE_LANG") or "en").lower()
    if lang not in LANGUAGES:
        problems.append(f"PRGUIDE_LANG must be one of {', '.join(LANGUAGES)}, got {lang!r}")

    db_path = Path(get("PRGUIDE_DB") or DEFAULT_DB).expanduser()
    if db_path.is_dir():
        problems.append(f"PRGUIDE_DB must name a database file, but {str(db_path)!r} is a folder")
    elif db_path.parent.exists() and not db_path.parent.is_dir():
        problems.append(f"PRGUIDE_DB: {str(db_path.parent)!r} is not a folder")

    workers = _int(get("PRGUIDE_WORKERS"), "PRGUIDE_WORKERS", problems, low=1, high=MAX_WORKERS, default=DEFAULT_WORKERS)

    log_level = (get("PRGUIDE_LOG_LEVEL") or "INFO").upper()
    if log_level not in LOG_LEVELS:
        problems.append(f"PRGUIDE_LOG_LEVEL must be one of {', '.join(LOG_LEVELS)}, got {log_level!r}")

    admin_token = get("PRGUIDE_ADMIN_TOKEN")
    if admin_token is not None and len(admin_token) < MIN_ADMIN_TOKEN_CHARS:
        problems.append(
            f"PRGUIDE_ADMIN_TOKEN must be at least {MIN_ADMIN_TOKEN_CHARS} characters (it lets its holder re-run jobs);"
            " generate one with: python -c 'import secrets; print(secrets.token_urlsafe(32))'"
        )

    database_url = get("PRGUIDE_DATABASE_URL")
    if database_url is not None and urlsplit(database_url).scheme not in ("postgresql", "postgres"):
        problems.append("PRGUIDE_DATABASE_URL must be a postgresql://USER@HOST:PORT/DATABASE URL (unset it to use the SQLite file)")
    schema = get("PRGUIDE_DATABASE_SCHEMA")
    if schema is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,62}", schema):
        problems.append(f"PRGUIDE_DATABASE_SCHEMA must be a plain identifier (letters, digits, _), got {schema!r}")
    pool_min = _int(get("PRGUIDE_DB_POOL_MIN"), "PRGUIDE_DB_POOL_MIN", problems, low=0, high=1000, default=6)
    pool_max = _int(get("PRGUIDE_DB_POOL_MAX"), "PRGUIDE_DB_POOL_MAX", problems, low=1, high=1000, default=10)
    if get("PRGUIDE_DB_POOL_MIN") is None and pool_min is not None and pool_max is not None:
        pool_min = min(pool_min, pool_max)  # the default least never exceeds a smaller most given
    if pool_min is not None and pool_max is not None and pool_min > pool_max:
        problems.append(f"PRGUIDE_DB_POOL_MIN ({pool_min}) must not exceed PRGUIDE_DB_POOL_MAX ({pool_max})")
    pool_timeout = _seconds(get("PRGUIDE_DB_POOL_TIMEOUT"), "PRGUIDE_DB_POOL_TIMEOUT", problems, default=10.0)
    job_lease = _seconds(get("PRGUIDE_JOB_LEASE"), "PRGUIDE_JOB_LEASE", problems, default=30.0)
    role = (get("PRGUIDE_ROLE") or "all").lower()
    if role not in ROLES:
        problems.append(f"PRGUIDE_ROLE must be one of {', '.join(ROLES)}, got {role!r}")
    elif database_url is None and role_problem(role, None):
        problems.append(f"PRGUIDE_ROLE (serve --role) {role_problem(role, None)}")
    reconcile_interval = _int(
        get("PRGUIDE_RECONCILE_INTERVAL"), "PRGUIDE_RECONCILE_INTERVAL", problems, low=0, default=DEFAULT_RECONCILE_INTERVAL
    )
    if reconcile_interval is not None and 0 < reconcile_interval < 60:
        problems.append(f"PRGUIDE_RECONCILE_INTERVAL must be 0 (off) or at least 60 seconds, got {reconcile_interval}")
    lookback = _int(
        get("PRGUIDE_RECONCILE_MAX_LOOKBACK"), "PRGUIDE_RECONCILE_MAX_LOOKBACK", problems, low=0,
        default=DEFAULT_RECONCILE_MAX_LOOKBACK,
    )
    if lookback is not None and reconcile_interval is not None and lookback < 2 * reconcile_interval:
        problems.append(
            f"PRGUIDE_RECONCILE_MAX_LOOKBACK must be at least twice PRGUIDE_RECONCILE_INTERVAL"
            f" ({2 * reconcile_interval} seconds), got {lookback}"
        )

    llm_url = get("PRGUIDE_LLM_URL")
    llm_model = get("PRGUIDE_LLM_MODEL") or ""
    if llm_url is not None:
        parts = urlsplit(llm_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            problems.append(f"PRGUIDE_LLM_URL must be an http(s) URL such as http://127.0.0.1:8000/v1, got {llm_url!r}")
        if not llm_model:
            problems.append("PRGUIDE_LLM_MODEL must name the model when PRGUIDE_LLM_URL is set (e.g. qwen2.5-coder:7b)")
    llm_timeout = _int(get("PRGUIDE_LLM_TIMEOUT"), "PRGUIDE_LLM_TIMEOUT", problems, low=1, high=600, default=60)
    llm_budget = _int(get("PRGUIDE_LLM_BUDGET"), "PRGUIDE_LLM_BUDGET", problems, low=500, high=200_000, default=3000)
    llm_daily = _int(get("PRGUIDE_LLM_DAILY_TOKENS"), "PRGUIDE_LLM_DAILY_TOKENS", problems, low=0, default=0)

    public_url = get("PRGUIDE_PUBLIC_URL")
    if public_url is not None:
        if not _plain_url(public_url):
            problems.append(
                "PRGUIDE_PUBLIC_URL must be the http(s) address readers reach prguide at, such as "
                f"https://prguide.example.com (no query or user name), got {public_url!r}"
            )
            public_url = None
        else:
            public_url = public_url.rstrip("/")
    proxies: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
    for item in re.split(r"[,\s]+", get("PRGUIDE_TRUSTED_PROXIES") or ""):
        if not item:
            continue
        try:
            proxies.append(ipaddress.ip_network(item, strict=False))
        except ValueError:
            problems.append(
                f"PRGUIDE_TRUSTED_PROXIES: {item!r} is not an IP address or network (such as 10.0.0.5 or 10.0.0.0/8)"
            )

    if problems:
        raise SettingsError(problems)
    assert app_id is not None and private_key is not None  # guaranteed by the checks above
    return Settings(
        app_id=app_id,
        private_key=private_key,
        webhook_secret=secret,
        api_url=api_url,
        host=host,
        port=port if port is not None else DEFAULT_PORT,
        rules=tuple(rules),
        lang=lang,
        db_path=db_path,
        workers=workers if workers is not None else DEFAULT_WORKERS,
        view_token=get("PRGUIDE_VIEW_TOKEN"),
        log_level=log_level,
        admin_token=admin_token,
        database_url=database_url,
        database_schema=schema,
        db_pool_min=pool_min if pool_min is not None else 6,
        db_pool_max=pool_max if pool_max is not None else 10,
        db_pool_timeout=pool_timeout,
        job_lease=job_lease,
        role=role,
        reconcile_interval=reconcile_interval if reconcile_interval is not None else DEFAULT_RECONCILE_INTERVAL,
        reconcile_max_lookback=lookback if lookback is not None else DEFAULT_RECONCILE_MAX_LOOKBACK,
        llm_url=llm_url.rstrip("/") if llm_url else None,
        llm_model=llm_model,
        llm_api_key=get("PRGUIDE_LLM_API_KEY"),
        llm_timeout=llm_timeout or 60,
        llm_budget=llm_budget or 3000,
        llm_daily_tokens=llm_daily or 0,
        public_url=public_url,
        trusted_proxies=tuple(proxies),
    )


def role_problem(role: str, database_url: str | None) -> str | None:
    """Why a replica of ``role`` cannot work on this database (one sentence starting with the
    role), or ``None``. ``web`` and ``worker`` split the work between processes through a
    shared PostgreSQL queue; on the SQLite file one process takes the deliveries and runs
    the jobs (the ``all`` role), so a ``web`` replica would answer 202 to deliveries no
    one ever handles, and a ``worker`` would wait for jobs no one queues."""
    if role == "all" or database_url:
        return None
    if role == "web":
        return ("web needs PRGUIDE_DATABASE_URL (PostgreSQL): on the SQLite file no worker runs the jobs it would"
                " queue; use role all")  # fmt: skip
    return "worker needs PRGUIDE_DATABASE_URL (PostgreSQL): on the SQLite file no web replica queues jobs for it; use role all"


def _seconds(raw: str | None, name: str, problems: list[str], *, default: float) -> float:
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        problems.append(f"{name} must be a number of seconds, got {raw!r}")
        return default
    if not 0 < value <= 86400:
        problems.append(f"{name} must be more than 0 and at most 86400 seconds, got {raw}")
        return default
    return value


def _plain_url(text: str) -> bool:
    """Whether ``text`` is an absolute http(s) URL with a host and no query, fragment or user info."""
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number 0-65535
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname) and not (parts.query or parts.fragment or "@" in parts.netloc)


def strip_line_break(value: str) -> str:
    """``value`` without one trailing ``\r\n`` or ``\n`` (a secret read from a file or ``echo``)."""
    if value.endswith("\r\n"):
        return value[:-2]
    return value[:-1] if value.endswith("\n") else value


def secret_warnings(secret: str) -> list[str]:
    """Start-up warnings about the webhook secret, never quoting it.

    GitHub's settings page takes the secret as typed: a secret that still begins or
    ends with whitespace after :func:`strip_line_break` is probably a copy-and-paste
    slip, and every delivery would then fail the signature check.
    """
    if secret and (secret != secret.strip()):
        return [
            "GITHUB_WEBHOOK_SECRET begins or ends with whitespace; if deliveries are refused with 401, "
            "compare it with the secret on the app's settings page"
        ]
    return []


def _int(
    raw: str | None,
    name: str,
    problems: list[str],
    *,
    low: int,
    high: int | None = None,
    default: int | None = None,
    required: bool = False,
) -> int | None:
    if raw is None:
        if required:
            problems.append(f"{name} is not set (the GitHub App's numeric id)")
        return default
    try:
        value = int(raw)
    except ValueError:
        problems.append(f"{name} must be a whole number, got {raw!r}")
        return default
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        problems.append(f"{name} must be {bound}, got {value}")
        return default
    return value


def _private_key(text: str | None, path: str | None, problems: list[str]) -> str | None:
    if text and path:
        problems.append("set only one of GITHUB_PRIVATE_KEY and GITHUB_PRIVATE_KEY_PATH")
        return None
    source = "GITHUB_PRIVATE_KEY"
    if path:
        source = "GITHUB_PRIVATE_KEY_PATH"
        try:
            text = Path(path).expanduser().read_text(encoding="ascii")
        except (OSError, UnicodeDecodeError) as exc:
            problems.append(f"GITHUB_PRIVATE_KEY_PATH: cannot read {path!r}: {exc.strerror or exc}")
            return None
    if not text:
        problems.append("GITHUB_PRIVATE_KEY or GITHUB_PRIVATE_KEY_PATH must be set (the App's .pem private key)")
        return None
    # Platforms that only take one-line variables carry the PEM with literal "\n".
    if "\\n" in text and "\n" not in text.strip():
        text = text.replace("\\n", "\n")
    text = text.strip() + "\n"
    if not _PEM_RE.search(text):
        problems.append(f"{source} is not a PEM private key (expected '-----BEGIN ... PRIVATE KEY-----')")
        return None
    try:
        from cryptography.hazmat.primitives.serialization import load_pem_private_key

        load_pem_private_key(text.encode("ascii"), password=None)
    except (ValueError, TypeError, UnicodeEncodeError) as exc:
        # The library's message never quotes the key material.
        problems.append(f"{source} cannot be loaded as a private key: {exc}")
        return None
    return text
