"""The labelled retrieval-quality set: memories an agent would write, queries it would ask, and
which memories each query should find. Deterministic; ``bench/data/quality.json`` is its output,
kept in the repository (``python -m bench.quality_set`` rewrites it; a unit test holds the two
equal).

The memories are English (decisions, facts, insights about customers, services and releases),
Chinese and Japanese (the same kinds of notes), built from templates over hand-written
vocabularies, with kinds, tags, paths and update times spread over 120 days.

What a query *should find* is decided here by rules that do not use Mnemo's analysis, so the
benchmark measures it rather than agreeing with it:

==========  ===================================================================================
class       the query, and what it should find
==========  ===================================================================================
exact       2–3 words copied from one memory; should find every memory holding each of them,
            as written or as another inflection of it (1–3 memories)
inflected   the same, each word replaced by another regular inflection of it (``deploys`` →
            ``deployments``, ``renewed`` → ``renewal``: the families in ``FAMILIES``)
partial     3 words of one memory and a 4th that no memory holds with them; should find the
            memories holding the 3 (the forgiving tools; the strict ones rightly find nothing)

A memory "holds" a word when one of its words (content, tags, path) is the word or another
inflection of it (``holds``).
cjk         1–2 Chinese or Japanese words of one memory; should find every memory containing
            each as a substring
filtered    2 words held by several memories, with ``path_filter`` or ``memory_type`` that keeps
            1–3 of them; should find those
recency     an ``updated_after`` / ``updated_before`` window, with no query (what changed: every
            memory updated in it, 1–5) or with a word many memories hold (those in the window)
paraphrase  a question in other words than the one memory it should find (``PARAPHRASES``: 30
            English, 5 Chinese, 5 Japanese, written by hand), among 8 distractors per query that
            carry the query's everyday words on other subjects, and the 2,400 others
==========  ===================================================================================

A query lists at most 5 memories to find, so recall@5 can reach 1.
"""

from __future__ import annotations

import json
import random
import re
import unicodedata
from collections.abc import Callable, Iterable
from datetime import UTC, datetime, timedelta
from itertools import combinations
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / "data" / "quality.json"
SEED = 16
BASE_TIME = datetime(2026, 6, 1, tzinfo=UTC)
DAYS = 120
MAX_RELEVANT = 5

#: regular inflections of one word, in the forms agents write (plural, -s, -ed, -ing, and the
#: -ment / -ion / -al nouns of the verb); a query's word stands for its whole family
FAMILIES: list[list[str]] = [
    ["deploy", "deploys", "deployed", "deploying", "deployment", "deployments"],
    ["migrate", "migrates", "migrated", "migrating", "migration", "migrations"],
    ["freeze", "freezes", "freezing"],
    ["configure", "configures", "configured", "configuring", "configuration", "configurations"],
    ["invoice", "invoices", "invoiced", "invoicing"],
    ["renew", "renews", "renewed", "renewing", "renewal", "renewals"],
    ["schedule", "schedules", "scheduled", "scheduling"],
    ["approve", "approves", "approved", "approving", "approval", "approvals"],
    ["integrate", "integrates", "integrated", "integrating", "integration", "integrations"],
    ["cache", "caches", "cached", "caching"],
    ["index", "indexes", "indexed", "indexing"],
    ["query", "queries", "queried", "querying"],
    ["escalate", "escalates", "escalated", "escalating", "escalation", "escalations"],
    ["rotate", "rotates", "rotated", "rotating", "rotation", "rotations"],
    ["throttle", "throttles", "throttled", "throttling"],
    ["replicate", "replicates", "replicated", "replicating", "replication"],
    ["archive", "archives", "archived", "archiving"],
    ["upgrade", "upgrades", "upgraded", "upgrading"],
    ["refund", "refunds", "refunded", "refunding"],
    ["timeout", "timeouts"],
    ["database", "databases"],
    ["meeting", "meetings"],
    ["customer", "customers"],
    ["release", "releases", "released", "releasing"],
    ["alert", "alerts", "alerted", "alerting"],
    ["contract", "contracts"],
    ["discount", "discounts", "discounted", "discounting"],
    ["backup", "backups"],
    ["certificate", "certificates"],
    ["dashboard", "dashboards"],
    ["friday", "fridays"],
    ["monday", "mondays"],
    ["outage", "outages"],
    ["ticket", "tickets"],
    ["webhook", "webhooks"],
    ["rollback", "rollbacks"],
    ["tenant", "tenants"],
    ["report", "reports", "reported", "reporting"],
    ["retry", "retries", "retried", "retrying"],
    ["benchmark", "benchmarks", "benchmarked", "benchmarking"],
]
FAMILY_OF = {word: i for i, family in enumerate(FAMILIES) for word in family}


def _words(text: str) -> list[str]:
    return text.split()


CUSTOMERS = _words(
    "Acme Globex Initech Umbrella Hooli Soylent Vandelay Wonka Stark Wayne Tyrell Cyberdyne Oscorp Pied"
    " Aperture Monarch Gringotts Nakatomi Virtucon Duff Krusty Sirius Dunder Massive Prestige Bluth"
    " Sterling Oceanic Nimbus Zorg"
)
SERVICES = _words(
    "billing search gateway auth checkout payments ledger reporting notifications scheduler exporter"
    " importer crawler mailer analytics inventory catalog pricing onboarding sync storage ingest webhooks"
    " console"
)
PEOPLE = _words("Ana Bilal Chen Dara Emeka Farah Goran Hana Ivan Jun Kemal Lena Mateo Noor Oskar Priya Rafael Sana")
WEEKDAYS = _words("monday tuesday wednesday thursday friday")
MONTHS = _words("january february march april may june july august september october november december")
PLANS = _words("starter team business enterprise annual")
REGIONS = _words("frankfurt virginia oregon tokyo singapore dublin")
TAGS = _words("pricing infra security billing growth support api release oncall legal sales perf data ops")
KINDS = ("decision", "fact", "insight", "note", "working")


def _form(rng: random.Random, family: int, *forms: int) -> str:
    words = FAMILIES[family]
    return words[rng.choice([f for f in forms if f < len(words)])]


def _f(word: str) -> int:
    return FAMILY_OF[word]


# Each template fills slots from the vocabularies and the families (an index picks the form).
EnglishTemplate = Callable[[random.Random], str]


def _english_templates() -> list[EnglishTemplate]:
    c, s, p, w, m = CUSTOMERS, SERVICES, PEOPLE, WEEKDAYS, MONTHS

    def t1(r: random.Random) -> str:
        return f"{r.choice(c)} {_form(r, _f('renew'), 2)} the {r.choice(PLANS)} plan after the {r.choice(m)} review"

    def t2(r: random.Random) -> str:
        return f"The {r.choice(s)} service {_form(r, _f('deploy'), 1)} every {r.choice(w)} once the freeze lifts"

    def t3(r: random.Random) -> str:
        return (
            f"{_form(r, _f('deploy'), 4, 5).capitalize()} of {r.choice(s)} {_form(r, _f('freeze'), 1)} on"
            f" {_form(r, _f('friday'), 1)} before the {r.choice(m)} release"
        )

    def t4(r: random.Random) -> str:
        return (
            f"{r.choice(p)} {_form(r, _f('migrate'), 2)} the {r.choice(s)} {_form(r, _f('database'), 0)} to"
            f" {r.choice(REGIONS)} in {r.choice(m)}"
        )

    def t5(r: random.Random) -> str:
        return (
            f"{r.choice(c)} asked for a {_form(r, _f('discount'), 0)} on the {r.choice(PLANS)} plan; {r.choice(p)}"
            f" {_form(r, _f('approve'), 2)} it"
        )

    def t6(r: random.Random) -> str:
        return (
            f"The {r.choice(s)} {_form(r, _f('cache'), 0)} expires after {r.randint(2, 90)} minutes;"
            f" {_form(r, _f('query'), 1)} from {r.choice(c)} hit it hardest"
        )

    def t7(r: random.Random) -> str:
        return (
            f"{r.choice(c)} {_form(r, _f('invoice'), 1)} are sent on the {_ordinal(r.randint(1, 28))} and paid by"
            f" {r.choice(['wire', 'card', 'cheque'])}"
        )

    def t8(r: random.Random) -> str:
        return (
            f"{_form(r, _f('rotate'), 4).capitalize()} of {r.choice(s)} {_form(r, _f('certificate'), 1)} is"
            f" {_form(r, _f('schedule'), 2)} for {r.choice(w)}"
        )

    def t9(r: random.Random) -> str:
        return (
            f"{r.choice(s)} {_form(r, _f('throttle'), 1)} {r.choice(c)} at {r.randint(50, 900)} requests a second;"
            f" {_form(r, _f('retry'), 1)} back off"
        )

    def t10(r: random.Random) -> str:
        return (
            f"{r.choice(p)} {_form(r, _f('escalate'), 2)} the {r.choice(c)} {_form(r, _f('outage'), 0)} to"
            f" the {r.choice(s)} team on {r.choice(w)}"
        )

    def t11(r: random.Random) -> str:
        return (
            f"The {r.choice(s)} {_form(r, _f('integrate'), 4)} with {r.choice(c)} uses {_form(r, _f('webhook'), 1)}"
            f" signed with a shared secret"
        )

    def t12(r: random.Random) -> str:
        return (
            f"{r.choice(c)} {_form(r, _f('contract'), 0)} ends in {r.choice(m)}; {r.choice(p)} owns the"
            f" {_form(r, _f('renew'), 4)}"
        )

    def t13(r: random.Random) -> str:
        return (
            f"{_form(r, _f('backup'), 1).capitalize()} of the {r.choice(s)} {_form(r, _f('database'), 0)} are"
            f" {_form(r, _f('replicate'), 2)} to {r.choice(REGIONS)} nightly"
        )

    def t14(r: random.Random) -> str:
        return (
            f"Weekly {_form(r, _f('meeting'), 0)} with {r.choice(c)} moved to {r.choice(w)}; {r.choice(p)} sends"
            f" the {_form(r, _f('report'), 0)}"
        )

    def t15(r: random.Random) -> str:
        return (
            f"The {r.choice(s)} {_form(r, _f('dashboard'), 0)} {_form(r, _f('alert'), 1)} {r.choice(p)} when"
            f" {_form(r, _f('timeout'), 1)} pass {r.randint(1, 20)} percent"
        )

    def t16(r: random.Random) -> str:
        return (
            f"{r.choice(c)} wants every {_form(r, _f('tenant'), 0)} {_form(r, _f('archive'), 2)} after"
            f" {r.randint(30, 400)} days"
        )

    def t17(r: random.Random) -> str:
        return (
            f"{r.choice(p)} {_form(r, _f('upgrade'), 2)} {r.choice(c)} to {r.choice(PLANS)} and"
            f" {_form(r, _f('refund'), 2)} the {r.choice(m)} {_form(r, _f('invoice'), 0)}"
        )

    def t18(r: random.Random) -> str:
        return (
            f"{_form(r, _f('rollback'), 0).capitalize()} of the {r.choice(s)} {_form(r, _f('release'), 0)} took"
            f" {r.randint(2, 40)} minutes on {r.choice(w)}"
        )

    def t19(r: random.Random) -> str:
        return (
            f"{r.choice(s)} {_form(r, _f('index'), 1)} {r.choice(c)} {_form(r, _f('ticket'), 1)} within"
            f" {r.randint(1, 30)} seconds"
        )

    def t20(r: random.Random) -> str:
        return (
            f"{r.choice(p)} {_form(r, _f('benchmark'), 2)} {r.choice(s)} against {r.choice(s)}: the"
            f" {_form(r, _f('configure'), 4)} from {r.choice(m)} wins"
        )

    def t21(r: random.Random) -> str:
        return (
            f"{r.choice(c)} {_form(r, _f('customer'), 1)} on {r.choice(PLANS)} get {_form(r, _f('monday'), 0)}"
            f" support from {r.choice(p)}"
        )

    return [t1, t2, t3, t4, t5, t6, t7, t8, t9, t10, t11, t12, t13, t14, t15, t16, t17, t18, t19, t20, t21]


ZH_CUSTOMERS = _words("华信科技 东方电商 北辰物流 海川银行 星河传媒 云帆教育 青松医疗 金石保险 天翼游戏 蓝鲸出行")
ZH_SERVICES = _words("支付服务 搜索服务 账单系统 网关 消息队列 数据库 缓存集群 推荐系统 日志平台 权限系统")
ZH_ACTIONS = _words("迁移 扩容 回滚 升级 部署 压测 下线 重构")
ZH_TIMES = _words("周一 周三 周五 月初 月底 季度末 春节前 国庆后")
ZH_ISSUES = _words("延迟升高 超时 丢消息 内存泄漏 死锁 慢查询 证书过期 限流")

JA_CUSTOMERS = _words("東和商事 山本電機 さくら銀行 みどり運輸 青空出版 北斗製薬 光学工業 海風食品")
JA_SERVICES = _words("決済サービス 検索エンジン 請求システム 認証基盤 通知サービス データベース キャッシュ 管理画面")
JA_ACTIONS = _words("デプロイ 移行 ロールバック アップグレード 負荷試験 メンテナンス")
JA_TIMES = _words("月曜日 水曜日 金曜日 月末 週末 四半期末")
JA_ISSUES = _words("遅延 タイムアウト 障害 メモリ不足 証明書の期限切れ")


def _chinese(r: random.Random) -> str:
    customer, service = r.choice(ZH_CUSTOMERS), r.choice(ZH_SERVICES)
    action, when, issue = r.choice(ZH_ACTIONS), r.choice(ZH_TIMES), r.choice(ZH_ISSUES)
    return r.choice(
        [
            f"{customer}的{service}计划在{when}完成{action}",
            f"{service}出现{issue}，{customer}要求{when}前给出复盘",
            f"决定：{customer}的{service}{action}推迟到{when}",
            f"{when}{service}{action}之后{issue}消失了",
        ]
    )


def _japanese(r: random.Random) -> str:
    customer, service = r.choice(JA_CUSTOMERS), r.choice(JA_SERVICES)
    action, when, issue = r.choice(JA_ACTIONS), r.choice(JA_TIMES), r.choice(JA_ISSUES)
    return r.choice(
        [
            f"{customer}の{service}は{when}に{action}する予定です",
            f"{service}で{issue}が発生し、{customer}に報告しました",
            f"決定：{customer}向けの{action}は{when}まで延期",
        ]
    )


def _memory(i: int, r: random.Random, english: list[EnglishTemplate]) -> dict[str, Any]:
    roll = r.random()
    if roll < 0.70:
        content = r.choice(english)(r)
        customer = next((w for w in content.replace(";", " ").split() if w in CUSTOMERS), None)
        lang = "en"
    elif roll < 0.88:
        content = _chinese(r)
        customer = next((c for c in ZH_CUSTOMERS if c in content), None)
        lang = "zh"
    else:
        content = _japanese(r)
        customer = next((c for c in JA_CUSTOMERS if c in content), None)
        lang = "ja"
    kind = r.choices(KINDS, (30, 25, 20, 15, 10))[0]
    area = r.choice(["customers", "infra", "product", "sales"])
    owned = customer is not None and area in ("customers", "sales")
    path = f"{area}/{customer.lower()}" if owned and customer else f"{area}/{r.choice(SERVICES)}"
    created = BASE_TIME + timedelta(minutes=i * (DAYS * 24 * 60) // 2400 + r.randint(0, 40))
    updated = created + timedelta(days=r.randint(1, 20)) if r.random() < 0.15 else created
    return {
        "id": f"q{i:05d}",
        "content": content,
        "kind": kind,
        "tags": sorted(r.sample(TAGS, r.choice((0, 1, 1, 2)))),
        "path": path,
        "created_at": _ts(created),
        "updated_at": _ts(min(updated, BASE_TIME + timedelta(days=DAYS))),
        "lang": lang,
    }


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _ts(value: datetime) -> str:
    return value.strftime("%Y-%m-%dT%H:%M:%S.000Z")


# -- the labelling rules (independent of mnemo.text) -------------------------------------------

_WORD = re.compile(r"[a-z0-9]+")


def words_of(memory: dict[str, Any]) -> set[str]:
    """A memory's English words: lower-cased letter/digit runs of content, tags and path."""
    return set(_WORD.findall(_fold(" ".join([memory["content"], *memory["tags"], memory["path"]]))))


def _fold(value: str) -> str:
    return unicodedata.normalize("NFKC", value).casefold()


def holds(memory_words: set[str], query: Iterable[str]) -> bool:
    """Whether the memory holds each query word, or another inflection of it (its family): a
    memory that says ``fridays`` is what a query for ``friday`` means."""
    for q in query:
        family = FAMILY_OF.get(q)
        if q not in memory_words and (family is None or not any(FAMILY_OF.get(w) == family for w in memory_words)):
            return False
    return True


def holds_text(memory: dict[str, Any], parts: Iterable[str]) -> bool:
    text = _fold(" ".join([memory["content"], *memory["tags"], memory["path"]]))
    return all(part in text for part in parts)


# -- the set ------------------------------------------------------------------------------------


# -- paraphrase: queries that share no word with the memory they should find ----------------------

#: (the memory, a query asking for it in other words, the query's words a distractor may carry).
#: Written by hand as an agent would note and later ask; no word of a query is a word (or another
#: inflection of a word) of its memory, and tests/unit/test_bench_quality_set.py checks that by
#: Mnemo's own analysis too.
PARAPHRASES: list[tuple[str, str, str, list[str]]] = [
    (
        "en",
        "The staging database is read-only on Sundays",
        "can I write to pre-prod during weekends",
        ["write", "weekends"],
    ),
    ("en", "Deploys freeze on Fridays", "when are releases blocked", ["releases", "blocked"]),
    ("en", "Alice prefers tea over coffee", "what hot drink does she like", ["hot", "drink", "like"]),
    ("en", "The VPN certificate expires in March", "when does our tunnel cert run out", ["tunnel", "run"]),
    ("en", "Bob is allergic to peanuts", "who has a nut allergy", ["nut", "allergy"]),
    (
        "en",
        "Use pnpm instead of npm in the frontend repo",
        "which package manager for our web client",
        ["package", "manager", "web", "client"],
    ),
    (
        "en",
        "The office wifi password rotates monthly",
        "how often does our wireless passphrase change",
        ["often", "wireless", "change"],
    ),
    ("en", "Invoices must be approved by the finance lead", "who signs off on bills", ["signs", "bills"]),
    (
        "en",
        "The CI pipeline times out after 90 minutes",
        "how long can a build job run before it is killed",
        ["long", "build", "job", "killed"],
    ),
    (
        "en",
        "Never store customer passwords in plain text",
        "how to keep user credentials safe",
        ["keep", "user", "safe"],
    ),
    (
        "en",
        "The printer on floor 3 jams with thick paper",
        "copier keeps getting stuck feeding cardstock",
        ["copier", "stuck", "feeding"],
    ),
    ("en", "Backups are kept for thirty days", "snapshot retention period", ["snapshot", "retention", "period"]),
    ("en", "The kitchen closes at 3pm", "until when can I get lunch", ["lunch", "until"]),
    ("en", "Team standup happens at 9:15 every weekday", "daily morning sync time", ["daily", "morning", "sync"]),
    ("en", "The API rate limit is 100 requests per minute", "throttling threshold for calls", ["threshold", "calls"]),
    (
        "en",
        "New hires get a laptop on their first day",
        "onboarding equipment for newcomers",
        ["equipment", "newcomers"],
    ),
    ("en", "Grace is vegetarian", "who doesn't eat meat", ["eat", "meat"]),
    (
        "en",
        "The firewall blocks outbound SMTP",
        "email sending stopped by network rules",
        ["email", "sending", "network", "rules"],
    ),
    (
        "en",
        "Logs older than a week are deleted automatically",
        "retention of audit trail records",
        ["audit", "trail", "records"],
    ),
    ("en", "Parking permits are renewed every January", "when do car lot passes lapse", ["car", "lot", "passes"]),
    (
        "en",
        "The on-call engineer must acknowledge pages within five minutes",
        "how quickly should a pager holder respond",
        ["quickly", "pager", "respond"],
    ),
    (
        "en",
        "Expense reports need receipts for anything above 50 euros",
        "proof of purchase rule on reimbursements",
        ["proof", "purchase", "rule"],
    ),
    (
        "en",
        "The Berlin office is closed on public holidays",
        "does our German branch open during national festivities",
        ["german", "branch", "open", "national"],
    ),
    (
        "en",
        "Production secrets live in the vault, not in environment files",
        "where are credentials for prod kept",
        ["credentials", "prod", "kept"],
    ),
    (
        "en",
        "Code reviews require two approvals before merging",
        "how many sign-offs does a pull request need",
        ["pull", "request", "many"],
    ),
    (
        "en",
        "The marketing site is built with Hugo",
        "which static generator powers our landing pages",
        ["static", "generator", "landing"],
    ),
    ("en", "Customer support answers chats from 8 to 18 CET", "help desk hours", ["help", "desk", "hours"]),
    ("en", "Visitors must sign in at the reception desk", "guest arrival procedure", ["guest", "arrival", "procedure"]),
    (
        "en",
        "Dark mode ships in the next mobile app version",
        "night theme for our phone application",
        ["night", "theme", "phone"],
    ),
    (
        "en",
        "Quarterly taxes are filed by the accountant in April",
        "who deals with our revenue service paperwork",
        ["deals", "revenue", "paperwork"],
    ),
    ("zh", "数据库每天凌晨两点备份", "资料存档几点进行", ["资料", "存档", "进行"]),
    ("zh", "新员工入职第一天领取电脑", "新人报到时发放笔记本", ["新人", "报到", "笔记本"]),
    ("zh", "周五下午不允许上线", "每周最后一个工作日能不能发布新版本", ["工作日", "发布", "版本"]),
    ("zh", "办公室的无线网络密码每月更换", "WiFi口令多久改一次", ["口令", "多久"]),
    ("zh", "报销需要附上发票", "费用返还要提供什么凭证", ["费用", "提供", "凭证"]),
    ("ja", "東京の会議室は予約が必要です", "ミーティングルームを使うには事前申請", ["ミーティング", "事前申請"]),
    ("ja", "明日は雨が降るので傘を持ってください", "天気が悪いときの持ち物", ["天気", "持ち物"]),
    ("ja", "社員食堂は午後二時に閉まります", "ランチは何時まで食べられる", ["ランチ", "何時"]),
    (
        "ja",
        "本番環境のパスワードは金庫で管理しています",
        "プロダクションの秘密情報の保管場所",
        ["プロダクション", "秘密情報", "保管場所"],
    ),
    ("ja", "来客は受付で名前を記入してください", "お客様が来たときの手続き", ["お客様", "手続き"]),
]

#: sentences around one or two of a query's everyday words, on other subjects
_DISTRACT_EN = [
    "{p} left the {a} notes on the shared drive",
    "Remember to mention the {a} in the {m} newsletter",
    "{p} wondered about the {a} and the {b} during the retro",
    "The {a} discussion moved to the {s} channel",
    "We voted to keep the {a} wording in the style guide",
    "A {a} question came up in the {m} all-hands",
    "{p} drew a {a} sketch for the {b} poster",
    "The {a} survey closes when {p} says so",
]
_DISTRACT_ZH = ["{a}的讨论放到下周的例会上", "{p}在周报里提到了{a}", "关于{a}和{b}的问卷已经发出", "{a}的海报由{p}设计"]
_DISTRACT_JA = [
    "{a}についての議論は来週に持ち越し",
    "{p}さんが{a}の資料を共有しました",
    "{a}と{b}のアンケートを配りました",
]
_EN_PEOPLE = _words("Quinn Rowan Tess Vik Wren Yara")
_ZH_PEOPLE = _words("小王 小李 老张 阿芳")
_JA_PEOPLE = _words("佐藤 鈴木 高橋 田中")
#: distractors per paraphrase query
DISTRACTORS = 8


def _paraphrase_memories(start: int, r: random.Random) -> tuple[list[dict[str, Any]], list[tuple[str, str, str]]]:
    """The paraphrase targets and their distractors (older than every other memory, so no recency
    window holds them); (memories, [(query, target id, lang)])."""
    memories: list[dict[str, Any]] = []
    asked = []
    when = BASE_TIME - timedelta(days=30)

    def add(content: str, lang: str) -> str:
        i = start + len(memories)
        created = when + timedelta(minutes=7 * len(memories))
        memories.append({"id": f"q{i:05d}", "content": content, "kind": r.choices(KINDS, (30, 25, 20, 15, 10))[0],
                         "tags": [], "path": f"{r.choice(['office', 'eng'])}/{r.choice(['notes', 'facts'])}",
                         "created_at": _ts(created), "updated_at": _ts(created), "lang": lang})  # fmt: skip
        return str(memories[-1]["id"])

    seen: set[str] = set()
    for lang, target, query, everyday in PARAPHRASES:
        asked.append((query, add(target, lang), lang))
        templates = {"en": _DISTRACT_EN, "zh": _DISTRACT_ZH, "ja": _DISTRACT_JA}[lang]
        people = {"en": _EN_PEOPLE, "zh": _ZH_PEOPLE, "ja": _JA_PEOPLE}[lang]
        made = 0
        while made < DISTRACTORS:
            a = r.choice(everyday)
            b = r.choice([w for w in everyday if w != a] or [a])
            line = r.choice(templates).format(a=a, b=b, p=r.choice(people), m=r.choice(MONTHS), s=r.choice(SERVICES))
            line = line[0].upper() + line[1:] if lang == "en" else line
            if line in seen:
                continue  # every distractor different (an identical add would be deduplicated)
            seen.add(line)
            add(line, lang)
            made += 1
    return memories, asked


def generate() -> dict[str, Any]:
    r = random.Random(SEED)
    english = _english_templates()
    memories = [_memory(i, r, english) for i in range(2400)]
    vocab = [words_of(m) for m in memories]
    queries: list[dict[str, Any]] = []

    def add(cls: str, query: str, relevant: list[str], **extra: Any) -> None:
        queries.append({"id": f"{cls}-{sum(q['class'] == cls for q in queries) + 1:03d}", "class": cls,
                        "query": query, "relevant": relevant, **extra})  # fmt: skip

    en = [i for i, m in enumerate(memories) if m["lang"] == "en"]
    content_words = [
        [w for w in _WORD.findall(_fold(memories[i]["content"])) if len(w) > 2 and not w.isdigit() and w not in STOP]
        for i in range(len(memories))
    ]

    # exact and inflected: word pairs and triples of one memory that few others hold
    tried: set[tuple[str, ...]] = set()
    while sum(q["class"] == "exact" for q in queries) < 50 or sum(q["class"] == "inflected" for q in queries) < 50:
        i = r.choice(en)
        words = sorted(set(content_words[i]))
        if len(words) < 3:
            continue
        picked = tuple(r.sample(words, r.choice((2, 3))))
        if picked in tried:
            continue
        tried.add(picked)
        inflectable = [w for w in picked if w in FAMILY_OF and len(FAMILIES[FAMILY_OF[w]]) > 1]
        if sum(q["class"] == "inflected" for q in queries) < 50 and len(inflectable) == len(picked):
            others = [r.choice([f for f in FAMILIES[FAMILY_OF[w]] if f != w]) for w in picked]
            relevant = [memories[j]["id"] for j in range(len(memories)) if holds(vocab[j], others)]
            if 1 <= len(relevant) <= 3:
                add("inflected", " ".join(others), relevant)
            continue
        if sum(q["class"] == "exact" for q in queries) < 50:
            relevant = [memories[j]["id"] for j in range(len(memories)) if holds(vocab[j], picked)]
            if 1 <= len(relevant) <= 3:
                add("exact", " ".join(picked), relevant)

    # partial: three words of one memory and a fourth no memory holds with them
    all_words = sorted({w for ws in content_words for w in ws})
    while sum(q["class"] == "partial" for q in queries) < 40:
        i = r.choice(en)
        words = sorted(set(content_words[i]))
        if len(words) < 4:
            continue
        three = r.sample(words, 3)
        holders = [j for j in range(len(memories)) if holds(vocab[j], three)]
        if not 1 <= len(holders) <= 3:
            continue
        fourth = r.choice(all_words)
        if fourth in three or any(holds(vocab[j], [fourth]) for j in holders):
            continue
        query = [*three, fourth]
        r.shuffle(query)
        add("partial", " ".join(query), [memories[j]["id"] for j in holders], strict_relevant=[])

    # cjk: one or two words of a Chinese or Japanese memory
    cjk_words = {"zh": [*ZH_CUSTOMERS, *ZH_SERVICES, *ZH_ACTIONS, *ZH_TIMES, *ZH_ISSUES],
                 "ja": [*JA_CUSTOMERS, *JA_SERVICES, *JA_ACTIONS, *JA_TIMES, *JA_ISSUES]}  # fmt: skip
    cjk = [i for i, m in enumerate(memories) if m["lang"] in cjk_words]
    seen_cjk: set[tuple[str, ...]] = set()
    while sum(q["class"] == "cjk" for q in queries) < 40:
        i = r.choice(cjk)
        memory = memories[i]
        held = [w for w in cjk_words[memory["lang"]] if w in memory["content"]]
        parts = tuple(sorted(r.sample(held, min(len(held), r.choice((2, 2, 3))))))
        if parts in seen_cjk:
            continue
        seen_cjk.add(parts)
        relevant = [m["id"] for m in memories if holds_text(m, parts)]
        if 1 <= len(relevant) <= MAX_RELEVANT:
            add("cjk", " ".join(parts), relevant, lang=memory["lang"])

    # filtered: two words several memories hold; a path or kind filter keeps 1-3 of them
    while sum(q["class"] == "filtered" for q in queries) < 30:
        i = r.choice(en)
        words = sorted(set(content_words[i]))
        if len(words) < 2:
            continue
        pair = r.sample(words, 2)
        holders = [j for j in range(len(memories)) if holds(vocab[j], pair)]
        if len(holders) < 4:
            continue
        target = memories[i]
        if r.random() < 0.5:
            kept = [memories[j]["id"] for j in holders if memories[j]["kind"] == target["kind"]]
            extra = {"memory_type": target["kind"]}
        else:
            prefix = target["path"].split("/")[0] + "/%"
            kept = [memories[j]["id"] for j in holders if memories[j]["path"].startswith(prefix[:-1])]
            extra = {"path_filter": prefix}
        if 1 <= len(kept) <= 3 and len(kept) < len(holders):
            add("filtered", " ".join(pair), kept, **extra)

    # recency: what changed in a window (no query), and a common word inside a window
    updated = sorted(range(len(memories)), key=lambda j: memories[j]["updated_at"])
    while sum(q["class"] == "recency" for q in queries) < 30:
        if r.random() < 0.5:
            start = r.randrange(len(updated) - 6)
            n = r.randint(1, MAX_RELEVANT)
            after = memories[updated[start]]["updated_at"]
            before = memories[updated[start + n]]["updated_at"]
            inside = [memories[j]["id"] for j in updated if after <= memories[j]["updated_at"] < before]
            if 1 <= len(inside) <= MAX_RELEVANT:
                add("recency", "", inside, updated_after=after, updated_before=before)
            continue
        word = r.choice(COMMON)
        holders = [j for j in updated if word in vocab[j]]
        if len(holders) < 10:
            continue
        start = r.randrange(len(holders) - 4)
        after = memories[holders[start]]["updated_at"]
        inside = [memories[j]["id"] for j in holders if memories[j]["updated_at"] >= after]
        if 1 <= len(inside) <= 3:
            add("recency", word, inside, updated_after=after)
        elif len(inside) > 3:
            before = memories[holders[start + 3]]["updated_at"]
            inside = [memories[j]["id"] for j in holders if after <= memories[j]["updated_at"] < before]
            if 1 <= len(inside) <= 3:
                add("recency", word, inside, updated_after=after, updated_before=before)

    # paraphrase: the targets and their distractors join the set after the other classes were
    # drawn (their own random stream), and no query of another class may find them by its rule
    extra, asked = _paraphrase_memories(len(memories), random.Random(SEED + 1))
    for query in queries:
        wanted = query["query"].split()
        if query["class"] == "partial":  # the memories holding three of its four words
            found = [m["id"] for m in extra if any(holds(words_of(m), c) for c in combinations(wanted, 3))]
        elif query["class"] in ("exact", "inflected", "filtered") and query["query"]:
            found = [m["id"] for m in extra if holds(words_of(m), wanted)]
        elif query["class"] == "cjk":
            found = [m["id"] for m in extra if holds_text(m, wanted)]
        else:
            found = []
        if found:
            raise AssertionError(f"{query['id']} would also find paraphrase-set memories {found}")
    memories += extra
    for query, target, lang in asked:
        add("paraphrase", query, [target], lang=lang)
    return {"seed": SEED, "memories": memories, "queries": queries}


#: English words a query never copies (too common to say which memory is meant)
STOP = set(_words("the and for with from after once are every when all its into per one two"))
#: words many memories hold, for recency queries
COMMON = ["release", "invoice", "plan", "service", "database", "review", "team", "customers"]


def dump(data: dict[str, Any]) -> str:
    """One memory or query per line: small, and a diff shows what changed."""
    lines = [f'{{"seed": {data["seed"]},', '"memories": [']
    lines += [json.dumps(m, ensure_ascii=False, sort_keys=True) + "," for m in data["memories"]]
    lines[-1] = lines[-1].rstrip(",")
    lines += ["],", '"queries": [']
    lines += [json.dumps(q, ensure_ascii=False, sort_keys=True) + "," for q in data["queries"]]
    lines[-1] = lines[-1].rstrip(",")
    lines += ["]}", ""]
    return "\n".join(lines)


def load() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DATA.read_text(encoding="utf-8"))
    return data


def main() -> None:
    DATA.parent.mkdir(parents=True, exist_ok=True)
    DATA.write_text(dump(generate()), encoding="utf-8")
    print(f"wrote {DATA.relative_to(ROOT)} ({DATA.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
