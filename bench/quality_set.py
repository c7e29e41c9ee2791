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
            English, 5 Chinese, 5 Japanese, written by hand; no word of it is a word, the start
            of a word or another inflection of a word of that memory), among 8 distractors per
            query: notes on other subjects that share the query's everyday words (time words,
            common verbs and nouns) and no query's topic words, and the 2,400 others
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
from itertools import combinations, count
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


class Words(frozenset[str]):
    """A memory's words, with the inflection families they belong to (read once: ``holds`` asks
    for them for every memory and query the generator tries, millions of times)."""

    families: frozenset[int]

    def __new__(cls, words: Iterable[str]) -> Words:
        made = super().__new__(cls, words)
        made.families = frozenset(FAMILY_OF[w] for w in made if w in FAMILY_OF)
        return made


def words_of(memory: dict[str, Any]) -> Words:
    """A memory's English words: lower-cased letter/digit runs of content, tags and path."""
    return Words(_WORD.findall(_fold(" ".join([memory["content"], *memory["tags"], memory["path"]]))))


def _fold(value: str) -> str:
    return unicodedata.normalize("NFKC", value).casefold()


def holds(memory_words: set[str] | Words, query: Iterable[str]) -> bool:
    """Whether the memory holds each query word, or another inflection of it (its family): a
    memory that says ``fridays`` is what a query for ``friday`` means."""
    if isinstance(memory_words, Words):
        families = memory_words.families
    else:
        families = frozenset(FAMILY_OF[w] for w in memory_words if w in FAMILY_OF)
    for q in query:
        family = FAMILY_OF.get(q)
        if q not in memory_words and (family is None or family not in families):
            return False
    return True


def holds_text(memory: dict[str, Any], parts: Iterable[str]) -> bool:
    text = _fold(" ".join([memory["content"], *memory["tags"], memory["path"]]))
    return all(part in text for part in parts)


# -- the set ------------------------------------------------------------------------------------


# -- paraphrase: queries that share no word with the memory they should find ----------------------

#: (language, the memory, a query asking for it in other words, the query's *everyday* words, its
#: *topic* words). Written by hand as an agent would note and later ask. No word of a query is a
#: word of its memory, nor the start of one (recall reads a query's words as prefixes too: ``cert``
#: would find ``certificate``), nor another inflection of one; no other memory of the set states the
#: fact a query asks for. Every English query word is an everyday word, a topic word or one of
#: ``FUNCTION``; a query's distractors carry its everyday words and no query's topic words.
#: tests/unit/test_bench_quality_set.py checks all of that by Mnemo's own analysis.
PARAPHRASES: list[tuple[str, str, str, list[str], list[str]]] = [
    ("en", "The staging database is read-only on Sundays", "can I write to pre-prod during weekends",
     ["can", "write", "during", "weekends"], ["pre", "prod"]),
    ("en", "Deploys freeze from Christmas until New Year", "can we ship code over the winter break",
     ["can", "over", "winter", "break"], ["ship", "code"]),
    ("en", "Alice prefers tea over coffee", "what hot drink does she like",
     ["what", "does", "she", "like"], ["hot", "drink"]),
    ("en", "The VPN certificate expires in March", "when does our remote access tunnel stop being trusted",
     ["when", "does", "our", "stop", "being"], ["remote", "access", "tunnel", "trusted"]),
    ("en", "Bob is allergic to peanuts", "who has a nut allergy", ["who", "has"], ["nut", "allergy"]),
    ("en", "Use pnpm instead of npm in the frontend repo", "which package manager for our web client",
     ["which", "for", "our"], ["package", "manager", "web", "client"]),
    ("en", "The office wifi password rotates monthly", "how often does our wireless passphrase change",
     ["how", "often", "does", "our", "change"], ["wireless", "passphrase"]),
    ("en", "Invoices must be approved by the finance lead", "who has to sign supplier bills",
     ["who", "has"], ["sign", "supplier", "bills"]),
    ("en", "The CI pipeline times out after 90 minutes", "how long can a build job run before it is killed",
     ["how", "long", "can", "run", "before"], ["build", "job", "killed"]),
    ("en", "Never store customer passwords in plain text", "how to keep user credentials safe",
     ["how", "keep"], ["user", "credentials", "safe"]),
    ("en", "The printer on floor 3 jams with thick paper", "copier keeps getting stuck feeding cardstock",
     ["keeps", "getting"], ["copier", "stuck", "feeding", "cardstock"]),
    ("en", "Backups are kept for thirty days", "how long do we hold on to snapshots",
     ["how", "long", "hold"], ["snapshots"]),
    ("en", "The kitchen closes at 3pm", "until when can I get lunch", ["until", "when", "can", "get"], ["lunch"]),
    ("en", "Team standup happens at 9:15 every weekday", "daily morning sync time",
     ["daily", "morning", "time"], ["sync"]),
    ("en", "Uploaded files larger than 25 MB are rejected", "what is the biggest attachment size we accept",
     ["what", "biggest", "size", "accept"], ["attachment"]),
    ("en", "New hires get a laptop on their first day", "what equipment do newcomers receive when they start",
     ["what", "when", "they", "start"], ["equipment", "newcomers", "receive"]),
    ("en", "Grace is vegetarian", "who doesn't eat meat", ["who", "eat"], ["meat"]),
    ("en", "The firewall blocks outbound SMTP", "email sending stopped by network rules",
     ["sending", "stopped", "rules"], ["email", "network"]),
    ("en", "Logs older than a week are deleted automatically", "how long do audit trail records stay around",
     ["how", "long", "stay", "around"], ["audit", "trail", "records"]),
    ("en", "Parking permits are renewed every January", "when do we need new car lot passes",
     ["when", "need", "new"], ["car", "lot", "passes"]),
    ("en", "The on-call engineer must acknowledge pages within five minutes",
     "how quickly should a pager holder respond", ["how", "quickly", "should"], ["pager", "holder", "respond"]),
    ("en", "Expense reports need receipts for anything above 50 euros",
     "what proof of purchase must I show to get money back",
     ["what", "must", "show", "get", "back"], ["proof", "purchase", "money"]),
    ("en", "The Berlin office is closed on public holidays",
     "does our German branch open during national festivities",
     ["does", "our", "open", "during"], ["german", "branch", "national", "festivities"]),
    ("en", "Production secrets live in the vault, not in environment files",
     "where are credentials for our public-facing systems kept",
     ["where", "for", "our", "kept"], ["credentials", "public", "facing", "systems"]),
    ("en", "Code reviews require two approvals before merging", "how many sign-offs does a pull request need",
     ["how", "many", "does", "need"], ["sign", "offs", "pull", "request"]),
    ("en", "The marketing site is built with Hugo", "which static generator powers our landing pages",
     ["which", "our"], ["static", "generator", "powers", "landing", "pages"]),
    ("en", "Customer support answers chats from 8 to 18 CET", "what hours is the help desk open",
     ["what", "hours", "open"], ["help", "desk"]),
    ("en", "Visitors must sign in at the reception desk", "what should a guest do when they arrive",
     ["what", "should", "when", "they"], ["guest", "arrive"]),
    ("en", "Dark mode ships in the next mobile app version", "when will our phone application get a night theme",
     ["when", "will", "our", "get"], ["phone", "application", "night", "theme"]),
    ("en", "Quarterly taxes are filed by the accountant in April", "who deals with our revenue service paperwork",
     ["who", "deals", "with", "our"], ["revenue", "service", "paperwork"]),
    ("zh", "数据库每天凌晨两点备份", "资料存档几点进行", ["几点", "进行"], ["资料", "存档"]),
    ("zh", "年会定在十二月第二个周六", "公司年底聚餐是哪一天", ["公司", "一天"], ["年底", "聚餐"]),
    ("zh", "三楼的饮水机坏了，请去二楼接水", "现在去哪儿倒开水", ["现在", "哪儿"], ["开水"]),
    ("zh", "公司班车早上七点半从地铁站发车", "通勤大巴几点出发", ["几点", "出发"], ["通勤", "大巴"]),
    ("zh", "下个月起加班餐补提高到三十元", "工作到很晚的话饭钱能报多少", ["工作", "多少"], ["很晚", "饭钱"]),
    ("ja", "東京の会議室は予約が必要です", "ミーティングルームを使うには事前申請",
     ["使う", "事前"], ["ミーティング", "ルーム", "申請"]),
    ("ja", "明日は雨が降るので傘を持ってください", "天気が悪いときの持ち物", ["悪い", "とき"], ["天気", "持ち物"]),
    ("ja", "健康診断は毎年十月に行います", "年に一度の検診はいつ", ["一度", "いつ"], ["検診"]),
    ("ja", "経費の締め日は毎月二十五日です", "精算の申請はいつまでに出せばいい", ["いつ", "までに"], ["精算", "申請"]),
    ("ja", "駐輪場は地下一階にあります", "自転車はどこに停めればいい", ["どこ", "いい"], ["自転車", "停め"]),
]  # fmt: skip
#: the English query words that are neither everyday nor topic words (too short to say anything)
FUNCTION = set(_words("a i is it to do we the of on are by doesn t"))

#: distractors: notes an agent would keep on other subjects, around everyday words (time words,
#: common verbs and nouns); a query's distractors are drawn from those holding one of its
#: everyday words, as written ({p}, {q}: people, {s}: a service, {m}: a month, {d}: a weekday)
_DISTRACT_EN = [
    "{p} can cover the {s} rota during the {m} holidays",
    "Nobody on the {s} team works weekends unless {p} asks",
    "{p} will write the {s} retro summary this time",
    "The {s} roadmap review ran over by twenty minutes",
    "The {s} load tests run overnight on {d}",
    "{p} is away for the winter break; {q} covers the {s} reviews",
    "{p} takes a break from {s} reviews until {m}",
    "{p} asked what the {s} team wants from the {m} planning",
    "{p} said she would like fewer meetings on {d}",
    "{p} does the {s} release notes every {d}",
    "When {p} is out, {q} approves the {s} roadmap",
    "Our {s} roadmap lives in the planning doc",
    "We agreed to stop sending the {s} digest on {d}",
    "{p} is being moved to the {s} team in {m}",
    "{p} has the spare key to the {s} lab",
    "Who owns the {s} roadmap is still open",
    "{p} decides which {s} tickets go into the {m} sprint",
    "{p} booked a room for the {s} workshop in {m}",
    "How {p} estimates the {s} work is written up in the wiki",
    "{p} checks the {s} error budget often during {m}",
    "The {s} team wants to change the sprint length to three weeks",
    "The {s} design review took too long on {d}",
    "{p} keeps the {s} roadmap slides up to date",
    "The {s} team keeps getting asked for {m} estimates",
    "{p} is getting a second monitor next {d}",
    "{p} will hold the {s} retro until {q} is back",
    "We hold the {s} planning meeting on the first {d} of the month",
    "{p} can get the {s} slides from the team folder",
    "The daily {s} error summary goes to {p}",
    "{p} likes meetings in the morning",
    "{p} keeps {d} afternoons free: no meetings at that time",
    "The {s} team took the biggest room for the {m} demo",
    "{p} asked to keep the {s} slide deck under ten slides",
    "The {s} team size grows to {n} people in {m}",
    "{p} will accept the {s} proposal after the {m} review",
    "They start the {s} planning after the {m} review",
    "The {s} team goes out to eat after every launch",
    "{p} stopped sending the {s} weekly digest",
    "Team rules for the {s} retro: cameras on, one topic each",
    "{p} will stay on the {s} team through {m}",
    "{p} is around on {d} for {s} questions",
    "The {s} team will need a new sprint board in {m}",
    "{p} is the new lead of the {s} team",
    "{p} reacts quickly to {s} review comments",
    "The {s} team should rotate the retro facilitator",
    "Everyone must show a demo at the {s} sprint review",
    "{p} gets back from leave on {d}",
    "The {s} retro board stays open until {d}",
    "{p} knows where the {s} whiteboard markers are",
    "{p} kept the old {s} roadmap for reference",
    "How many people join the {s} demo depends on {p}",
    "{p} works {n} hours a week on the {s} team",
    "{p} deals with the {s} vendor contracts",
    "Our {s} retro happens every second {d}",
    "{p} starts the {s} demo when the team is ready",
    "What goes into the {s} newsletter is up to {p}",
    "{p} has to approve leave for the {s} team",
    "Who takes notes at the {s} retro rotates every sprint",
    "{p} does not like long {s} meetings",
    "{p} will change the {s} retro format in {m}",
    "{p} can start on the {s} migration after {m}",
    "They moved the {s} demo to {d} morning",
    "{p} should write up the {s} incident review",
    "Which {s} dashboards matter is decided by {p}",
    "{p} is being trained to review {s} changes",
    "{p} works before nine on {d}",
    "The biggest {s} risk this quarter is staffing",
    "{p} sits with the {s} team on {d} and {q} on the other days",
    "Ask {q} before {p} books the {s} workshop for {m}",
    "{p} keeps a list of open {s} questions for the {m} retro",
    "{p} has a standing slot with {q} on {d}",
    "Keep the {s} retro to forty minutes, {p} asked",
    "{p} and {q} eat together after the {s} demo",
    "The {s} team rules say no screens in the retro",
    "{p} stopped the {s} chat bot on {d}",
]
_DISTRACT_ZH = [
    "{p}还没定{d}的周会几点开始",
    "明天几点去机场由{p}通知大家",
    "{s}的巡检几点做要问{p}",
    "{s}的代码评审每{d}进行",
    "季度复盘由{p}主持进行",
    "{s}压测将在{d}晚上进行",
    "{p}下个月代表公司去参加行业大会",
    "公司的新邮箱系统由{p}负责",
    "{s}的费用由公司统一支付",
    "{p}每周有一天在家办公",
    "{p}请了一天假，{d}回来",
    "{p}现在负责{s}的值班",
    "现在的需求评审改成线上开",
    "{s}现在由{p}维护",
    "团建去哪儿由{p}投票决定",
    "{s}的设计稿放哪儿要问{p}",
    "{p}{d}出发去上海出差",
    "{p}{d}一早出发去客户现场",
    "{p}的工作交接文档已经写完",
    "{s}的工作量评估由{p}负责",
    "{d}的工作周报由{p}汇总",
    "{s}的预算还剩多少要问{p}",
    "这次培训有多少人报名由{p}统计",
    "{s}每天处理多少请求记在看板上",
]
_DISTRACT_JA = [
    "{p}さんは新しいエディタを使うことにしました",
    "{s}の検証環境を使うときは{p}さんに連絡",
    "テスト用のアカウントは{p}さんのものを使う",
    "打ち合わせの議題は事前に{p}さんへ送ってください",
    "{s}の変更は事前にレビューを受ける",
    "{p}さんは体調が悪いので{d}は休みです",
    "{s}の応答が悪い原因を{p}さんが調査中",
    "困ったときは{p}さんに相談してください",
    "{s}が止まったときの連絡先は{p}さんです",
    "{p}さんとの面談は月に一度です",
    "{s}の設定はもう一度見直すことになった",
    "{p}さんの次の出張はいつか未定です",
    "{s}のリリースはいつも{d}です",
    "{p}さんは{d}までに見積もりを出します",
    "{s}の移行計画は{d}までにまとめる",
    "{p}さんは予備のケーブルがどこにあるか知っています",
    "{s}の設計書がどこにあるかは{p}さんに聞く",
    "{s}の新しい画面は評判がいい",
    "{p}さんの発表資料はとてもいいと好評でした",
]
_EN_PEOPLE = _words("Quinn Rowan Tess Vik Wren Yara")
_ZH_PEOPLE = _words("小王 小李 老张 阿芳")
_JA_PEOPLE = _words("佐藤 鈴木 高橋 田中")
_EN_SERVICES = _words("search gateway checkout ledger scheduler exporter importer analytics inventory catalog")
_ZH_DAYS = _words("周一 周二 周三 周四")
_JA_DAYS = _words("月曜日 火曜日 水曜日 木曜日")
#: distractors per paraphrase query
DISTRACTORS = 8


def _english_words(text: str) -> list[str]:
    return _WORD.findall(_fold(text))


def _carries(text: str, word: str) -> bool:
    """Whether a memory's text carries a query word the way recall would read it: an English word
    that is it, starts with it or shares its Snowball stem (checked independently of mnemo.text);
    a CJK word as a substring, or one of its character pairs."""
    import Stemmer

    if word.isascii():
        stem = Stemmer.Stemmer("english").stemWord
        return any(w.startswith(word) or stem(w) == stem(word) for w in _english_words(text))
    folded = _fold(text)
    return any(word[i : i + 2] in folded for i in range(max(1, len(word) - 1)))


def _paraphrase_memories(
    start: int, r: random.Random
) -> tuple[list[dict[str, Any]], list[tuple[str, str, str, dict[str, Any]]]]:
    """The paraphrase targets and their distractors (older than every other memory, so no recency
    window holds them); (memories, [(query, target id, lang, extra fields)])."""
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

    topics = [t for *_, topic in PARAPHRASES for t in topic]
    seen: set[str] = set()
    for lang, target, query, everyday, topic in PARAPHRASES:
        target_id = add(target, lang)
        templates = {"en": _DISTRACT_EN, "zh": _DISTRACT_ZH, "ja": _DISTRACT_JA}[lang]
        if lang == "en":
            fitting = [t for t in templates if set(everyday) & set(_english_words(t))]
        else:
            fitting = [t for t in templates if any(w in t for w in everyday)]
        if len(fitting) < 2:
            raise AssertionError(f"too few distractor templates hold the everyday words of {query!r}")
        people = {"en": _EN_PEOPLE, "zh": _ZH_PEOPLE, "ja": _JA_PEOPLE}[lang]
        services = {"en": _EN_SERVICES, "zh": ZH_SERVICES, "ja": JA_SERVICES}[lang]
        days = {"en": [d.capitalize() for d in WEEKDAYS], "zh": _ZH_DAYS, "ja": _JA_DAYS}[lang]
        order = r.sample(fitting, len(fitting))  # each fitting template in turn, then again
        distractors: list[str] = []
        for turn in count():
            if len(distractors) == DISTRACTORS:
                break
            p, q = r.sample(people, 2)
            line = order[turn % len(order)].format(p=p, q=q, s=r.choice(services), m=r.choice(MONTHS).capitalize(),
                                            d=r.choice(days), n=r.randint(4, 12))  # fmt: skip
            line = line[0].upper() + line[1:]
            if _fold(line) in seen:
                continue  # every distractor different (an identical add would be deduplicated)
            carried = [t for t in topics if _carries(line, t)]
            if carried:
                raise AssertionError(f"distractor {line!r} carries the topic words {carried}")
            seen.add(_fold(line))
            distractors.append(add(line, lang))
        asked.append((query, target_id, lang, {"everyday": everyday, "topic": topic, "distractors": distractors}))
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
    for query, target, lang, fields in asked:
        add("paraphrase", query, [target], lang=lang, **fields)
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
