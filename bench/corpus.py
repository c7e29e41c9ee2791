"""A deterministic, realistic corpus of memories, and cached SQLite databases holding it.

The corpus mixes English and Chinese the way an agent's notes do:

* **English** words follow a Zipf-like law (weight ``1 / rank``) over a vocabulary of ~160 real
  function and content words followed by a long tail of generated pseudo-words (``TAIL_WORDS``);
  function words ("the", "to", …) head the ranking, as they do in real text.
* **Chinese** text is drawn from ~120 work-domain phrases of 2–4 characters followed by a tail
  of ``TAIL_ZH`` generated 2–3 character words over ~500 common characters, also Zipf-ranked
  (weight ``1 / rank``), so common bigrams are common and rare ones rare, as in real text.
* A memory is English (55 %), Chinese (25 %) or mixed (20 %), 50–400 bytes of UTF-8 (uniform
  target), with a kind (80 %), 0–3 tags (Zipf over 40), a path (50 %), a team (15 %, of which
  a third belongs to a team the benchmark's key cannot see) and, for 1 %, an expiry in the past.

Everything is drawn from ``random.Random(seed)``, so the same parameters give the same corpus,
byte for byte, and the 1k corpus is the first thousand memories of the 100k one.

Queries (``queries``) are drawn from the same vocabulary, in this documented mix:

==============  =====  ==============================================================
class           share  what
==============  =====  ==============================================================
rare_en         25 %   one English content word of rank ≥ 1000 (a handful of matches)
common_en       25 %   one English content word among the 100 most frequent
multi_en        20 %   2–3 English content words: one common + 1–2 of rank < 500
zh              20 %   2–4 consecutive characters of a Chinese content word (Zipf-drawn)
mixed           10 %   one common-to-medium English word and one Chinese phrase
==============  =====  ==============================================================

Function words ("the", "and", "的", "我们", …) are never drawn into the mix: an agent does not search for them.
The worst case they represent is measured separately (``stopword`` class, reported apart).
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import json
import random
import shutil
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path


def _words(text: str) -> list[str]:
    return text.split()


ROOT = Path(__file__).resolve().parent.parent
CACHE_DIR = ROOT / ".cache" / "bench"

BENCH_KEY = "bench-key-0123456789abcdef"  # read + write, team-a
BENCH_ADMIN_KEY = "bench-admin-0123456789abcdef"
MAX_PER_MINUTE = 1_000_000  # the bench must measure the work, not the rate limiter's refusals

FUNCTION_WORDS = _words(
    "the to of and a in is for on that it with be this as we not are at use or from by but when if an was"
    " all can should has have they so one our do no more than only after before"
)

CONTENT_WORDS = _words(
    "user api database latency cache deploy error request server client team customer pricing query index"
    " memory search release test config token limit timeout retry queue worker reddit post reply thread"
    " comment product launch feature bug fix issue review design schema migration backup region lambda"
    " table bucket policy key secret auth login session webhook event stream batch job schedule cron"
    " metric alert dashboard log trace span billing invoice plan upgrade trial churn signup onboarding"
    " email campaign growth funnel decision insight fact note meeting roadmap sprint deadline estimate"
    " budget vendor contract python rust typescript docker kubernetes terraform postgres redis kafka"
    " opensearch dynamodb sqlite lambda gateway cloudfront route vpc subnet firewall certificate domain"
    " dns embedding vector prompt model agent tool context window summary ranking relevance recall"
    " precision benchmark profile throughput concurrency lock transaction rollback replica shard partition"
    " compaction vacuum latency spike outage incident postmortem oncall pager runbook"
)

#: Chinese function words head the Chinese ranking, as "the", "to" … head the English one
CHINESE_FUNCTION_WORDS = _words(
    "的 了 是 在 和 也 就 都 我们 一个 这个 需要 可以 没有 因为 所以 如果 但是 已经 还是 应该 进行 通过 他们"
)
CHINESE_PHRASES = _words(
    "数据库 延迟 缓存 部署 错误 请求 服务器 客户端 团队 客户 定价 查询 索引 内存 搜索 发布"
    " 测试 配置 令牌 限流 超时 重试 队列 任务 产品 上线 功能 缺陷 修复 问题 评审 设计 架构"
    " 迁移 备份 区域 函数 表格 存储 策略 密钥 认证 登录 会话 事件 数据流 批处理 调度 指标"
    " 告警 仪表盘 日志 链路 账单 发票 套餐 升级 试用 流失 注册 新手引导 邮件 活动 增长 漏斗"
    " 决策 洞察 事实 笔记 会议 路线图 迭代 截止日期 估算 预算 供应商 合同 向量 提示词 模型"
    " 智能体 工具 上下文 摘要 排序 相关性 召回率 准确率 基准测试 性能分析 吞吐量 并发 事务"
    " 回滚 副本 分片 分区 压缩 故障 事故 复盘 值班 手册 用户体验 需求 优先级 负载均衡 高可用"
    " 灾备 监控 容量规划 成本优化 灰度发布 回归测试 代码审查 技术债务 文档 接口 兼容性 安全漏洞"
    " 权限 审计"
)

TAGS = _words(
    "reddit pricing db perf infra deploy security billing growth support api mcp search agent 性能 数据库 部署"
    " 安全 增长 客服 frontend backend mobile ops incident design roadmap legal hiring sales marketing docs"
    " research ml data cost oncall release qa"
)
KINDS = ("insight", "decision", "fact", "note", "working")
KIND_WEIGHTS = (30, 20, 20, 20, 10)
PATH_PARTS = (
    ("acme", "globex", "initech", "umbrella", "personal"),
    ("pricing", "infra", "growth", "support", "product", "research", "ops"),
    ("decisions", "notes", "incidents", "experiments", "customers", "meetings"),
)

TAIL_WORDS = 30_000
TAIL_ZH = 8_000
#: common characters for the generated Chinese tail (with those of CHINESE_PHRASES)
_ZH_CHARS = (
    "的一是不了人我在有他这中大来上国个到说们为子和你地出道也时年得就那要下以生会自着去之过家学对可她里后"
    "小么心多天而能好都然没日于起还发成事只作当想看文无开手十用主行方又如前所本见经头面公同三已老从动两长"
    "知民样现分将外但身些与高意进把法此实回二理美点月明其种声全工己话儿者向情部正名定女问力机给等几很业最"
    "间新什打便位因重被走电四第门相次东政海口使教西再平真听世气信北少关并内加化由却代军产入先山五太水万市"
    "眼体别处总才场师书比住员九笑性通目华报立马命张活难神数件安表原车白应路期叫死常提感金何更反合放做系计"
)
_ONSETS = _words("b c d f g h j k l m n p r s t v w z br cr dr fl gr pl pr st tr sk sl sn sp ch sh th")
_VOWELS = _words("a e i o u ai ea io ou")
_CODAS = ["", "", "n", "r", "s", "t", "l", "x", "nd", "rk", "st"]


@dataclass(frozen=True)
class CorpusParams:
    size: int
    seed: int = 7
    min_bytes: int = 50
    max_bytes: int = 400

    def key(self) -> str:
        """Cache key: the parameters plus the code that decides what is stored and indexed
        (the generator, the analyser, the schema, the index, the record model, the layout version)."""
        from mnemo.backends.sqlite.db import INDEX_VERSION

        h = hashlib.sha256(json.dumps({**asdict(self), "index": INDEX_VERSION}, sort_keys=True).encode())
        for rel in (
            "bench/corpus.py",
            "shared/mnemo/text.py",
            "shared/mnemo/backends/sqlite/schema.sql",
            "shared/mnemo/models/records.py",
            "shared/mnemo/embedding/static.py",
        ):
            h.update((ROOT / rel).read_bytes())
        h.update(_index_layout().encode())
        return f"n{self.size}-s{self.seed}-{h.hexdigest()[:12]}"


def _index_layout() -> str:
    """What of the SQLite index decides what it stores (not how it searches): the keys and
    impacts of a document."""
    import inspect

    from mnemo.backends.sqlite import postings

    constants = (postings.K1, postings.B, postings.FIELD_WEIGHTS, postings.PIVOT, postings.SCALE, postings.SURFACE)
    return repr(constants) + inspect.getsource(postings.document_keys) + inspect.getsource(postings.insert_document)


class Vocabulary:
    """English words (function words, content words, generated tail) and Chinese phrases,
    each with Zipf-like cumulative weights for fast sampling."""

    def __init__(self, seed: int) -> None:
        rng = random.Random(seed ^ 0x5EED)
        seen = set(FUNCTION_WORDS) | set(CONTENT_WORDS)
        tail: list[str] = []
        while len(tail) < TAIL_WORDS:
            word = "".join(
                rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS) for _ in range(rng.choice((2, 2, 3)))
            )
            if word not in seen:
                seen.add(word)
                tail.append(word)
        content = list(dict.fromkeys(CONTENT_WORDS))
        # function words interleaved at the head, as in real text; content words after them
        self.english = [*FUNCTION_WORDS, *content, *tail]
        self.function_words = set(FUNCTION_WORDS)
        self.content = [*content, *tail]  # content ranks: index in this list
        phrases = list(dict.fromkeys(CHINESE_PHRASES))
        chars = sorted(set(_ZH_CHARS) | set("".join(phrases)))
        zh_seen = set(phrases)
        zh_tail: list[str] = []
        while len(zh_tail) < TAIL_ZH:
            word = "".join(rng.choice(chars) for _ in range(rng.choice((2, 2, 3))))
            if word not in zh_seen:
                zh_seen.add(word)
                zh_tail.append(word)
        self.chinese = [*CHINESE_FUNCTION_WORDS, *phrases, *zh_tail]
        self.chinese_content = [*phrases, *zh_tail]  # what queries draw from
        self._zh_content_cum = list(itertools.accumulate(1.0 / (r + 1) for r in range(len(self.chinese_content))))
        self._en_cum = list(itertools.accumulate(1.0 / (r + 1) for r in range(len(self.english))))
        self._zh_cum = list(itertools.accumulate(1.0 / (r + 1) for r in range(len(self.chinese))))
        self._tag_cum = list(itertools.accumulate(1.0 / (r + 1) for r in range(len(TAGS))))

    def en(self, rng: random.Random) -> str:
        return self.english[bisect.bisect_left(self._en_cum, rng.random() * self._en_cum[-1])]

    def zh(self, rng: random.Random) -> str:
        return self.chinese[bisect.bisect_left(self._zh_cum, rng.random() * self._zh_cum[-1])]

    def zh_content(self, rng: random.Random) -> str:
        cum = self._zh_content_cum
        return self.chinese_content[bisect.bisect_left(cum, rng.random() * cum[-1])]

    def tag(self, rng: random.Random) -> str:
        return TAGS[bisect.bisect_left(self._tag_cum, rng.random() * self._tag_cum[-1])]


@dataclass(frozen=True)
class Doc:
    content: str
    kind: str | None
    tags: list[str]
    path: str | None
    team_id: str | None
    created_at: datetime
    expires_at: datetime | None


BASE_TIME = datetime(2025, 1, 1, tzinfo=UTC)
PAST_EXPIRY = datetime(2025, 6, 1, tzinfo=UTC)


def _english(vocab: Vocabulary, rng: random.Random, budget: int) -> str:
    words: list[str] = []
    size = 0
    sentence = 0
    while size < budget:
        word = vocab.en(rng)
        if sentence == 0:
            word = word.capitalize()
        sentence += 1
        if sentence >= rng.randint(6, 16):
            word += rng.choice((".", ".", ",", ";"))
            sentence = 0
        words.append(word)
        size += len(word) + 1
    return " ".join(words)


def _chinese(vocab: Vocabulary, rng: random.Random, budget: int) -> str:
    parts: list[str] = []
    size = 0
    while size < budget:
        phrase = vocab.zh(rng)
        if rng.random() < 0.25:
            phrase += rng.choice(("，", "。", "；"))
        parts.append(phrase)
        size += len(phrase.encode())
    return "".join(parts)


def _fit(content: str, max_bytes: int) -> str:
    data = content.encode()
    if len(data) <= max_bytes:
        return content
    return data[:max_bytes].decode("utf-8", "ignore").rstrip()


def generate(params: CorpusParams) -> list[Doc]:
    vocab = Vocabulary(params.seed)
    rng = random.Random(params.seed)
    docs: list[Doc] = []
    for i in range(params.size):
        target = rng.randint(params.min_bytes, params.max_bytes)
        mode = rng.random()
        if mode < 0.55:
            content = _english(vocab, rng, target)
        elif mode < 0.80:
            content = _chinese(vocab, rng, target)
        else:
            content = ""
            while len(content.encode()) < target:
                if rng.random() < 0.5:
                    content += _english(vocab, rng, rng.randint(15, 60)) + " "
                else:
                    content += _chinese(vocab, rng, rng.randint(6, 30)) + " "
        content = _fit(content.strip(), params.max_bytes)
        while len(content.encode()) < params.min_bytes:
            content = _fit(content + " " + _english(vocab, rng, params.min_bytes), params.max_bytes)
        kind = rng.choices(KINDS, KIND_WEIGHTS)[0] if rng.random() < 0.8 else None
        tags = list(dict.fromkeys(vocab.tag(rng) for _ in range(rng.choice((0, 1, 1, 2, 2, 3)))))
        path = "/".join(rng.choice(part) for part in PATH_PARTS) if rng.random() < 0.5 else None
        team_roll = rng.random()
        team = "team-a" if team_roll < 0.10 else "team-b" if team_roll < 0.15 else None
        expires = PAST_EXPIRY if rng.random() < 0.01 else None
        created = BASE_TIME + timedelta(seconds=i * 300 + rng.randint(0, 299))
        docs.append(Doc(content, kind, tags, path, team, created, expires))
    return docs


# -- queries ---------------------------------------------------------------------------------

QUERY_MIX = (("rare_en", 25), ("common_en", 25), ("multi_en", 20), ("zh", 20), ("mixed", 10))


def queries(seed: int, count: int) -> list[tuple[str, str]]:
    """``count`` (class, query) pairs in the documented mix, deterministically shuffled."""
    vocab = Vocabulary(seed)
    rng = random.Random(seed * 1_000_003 + count)
    content = vocab.content
    common = content[:100]
    medium = content[:500]
    rare = content[1000:]

    def zh_fragment() -> str:
        phrase = vocab.zh_content(rng)
        n = rng.randint(2, min(4, len(phrase)))
        start = rng.randint(0, len(phrase) - n)
        return phrase[start : start + n]

    makers = {
        "rare_en": lambda: rng.choice(rare),
        "common_en": lambda: rng.choice(common),
        "multi_en": lambda: " ".join([rng.choice(common), *rng.sample(medium, rng.randint(1, 2))]),
        "zh": zh_fragment,
        "mixed": lambda: f"{rng.choice(content[:1000])} {vocab.zh_content(rng)}",
    }
    out: list[tuple[str, str]] = []
    for name, share in QUERY_MIX:
        n = round(count * share / 100)
        out.extend((name, makers[name]()) for _ in range(n))
    rng.shuffle(out)
    return out[:count]


def stopword_queries(seed: int, count: int) -> list[tuple[str, str]]:
    """The worst case, reported apart from the mix: one of the most frequent function words."""
    rng = random.Random(seed + count)
    return [("stopword", rng.choice(FUNCTION_WORDS[:10])) for _ in range(count)]


# -- the cached database ---------------------------------------------------------------------


@dataclass(frozen=True)
class BenchDb:
    path: Path
    params: CorpusParams
    workspace_id: str
    project_id: str
    build_s: float | None  # None when it came from the cache


def build_db(params: CorpusParams, cache_dir: Path = CACHE_DIR) -> BenchDb:
    """The corpus in a SQLite file under ``cache_dir``, built once per parameters and code."""
    import time

    from mnemo.backends.sqlite import SqliteBackend
    from mnemo.service import tenancy

    cache_dir.mkdir(parents=True, exist_ok=True)
    path = cache_dir / f"corpus-{params.key()}.db"
    meta_path = path.with_suffix(".json")
    if path.exists() and meta_path.exists():
        meta = json.loads(meta_path.read_text())
        return BenchDb(path, params, meta["workspace_id"], meta["project_id"], None)

    started = time.perf_counter()
    tmp = path.with_suffix(".tmp")
    for stale in cache_dir.glob(f"corpus-n{params.size}-s{params.seed}-*"):
        stale.unlink()
    for leftover in (tmp, tmp.with_name(tmp.name + "-wal"), tmp.with_name(tmp.name + "-shm")):
        leftover.unlink(missing_ok=True)
    backend = SqliteBackend(tmp)
    backend.db.conn().execute("PRAGMA cache_size = -262144")  # 256 MiB: the bulk load's one transaction
    workspace, project = tenancy.create_workspace(backend, "bench")
    from mnemo.models.records import RateLimits

    backend.tenants.set_limits(workspace.id, RateLimits(search=MAX_PER_MINUTE, write=MAX_PER_MINUTE))
    tenancy.create_key(
        backend,
        workspace.id,
        label="bench",
        scopes=["memory:read", "memory:write"],
        team_ids=["team-a"],
        plain=BENCH_KEY,
    )
    tenancy.create_key(backend, workspace.id, label="bench-admin", scopes=["admin"], plain=BENCH_ADMIN_KEY)
    load(backend, workspace.id, project.id, generate(params))
    backend.db.conn().execute("PRAGMA wal_checkpoint(TRUNCATE)")
    backend.close()
    shutil.move(tmp, path)
    meta_path.write_text(json.dumps({"workspace_id": workspace.id, "project_id": project.id, **asdict(params)}))
    return BenchDb(path, params, workspace.id, project.id, time.perf_counter() - started)


def load(backend: object, workspace_id: str, project_id: str, docs: list[Doc]) -> None:
    """Bulk insert through the backend's own ports, in one unit of work (one transaction)."""
    from mnemo.embedding import default_embedder
    from mnemo.models.records import Embedding, MemoryRecord
    from ulid import ULID

    ports = backend  # a Ports bundle
    rng = random.Random(len(docs))
    embedder = default_embedder()  # every memory gets its vector, as memory_add writes it
    vectors = embedder.embed([doc.content for doc in docs])
    with ports.store.unit_of_work():  # type: ignore[attr-defined]
        for doc, vector in zip(docs, vectors, strict=True):
            ulid_bytes = int(doc.created_at.timestamp() * 1000).to_bytes(6, "big") + rng.randbytes(10)
            record = MemoryRecord(
                id=f"mem_{ULID.from_bytes(ulid_bytes)}",
                workspace_id=workspace_id,
                project_id=project_id,
                content=doc.content,
                kind=doc.kind,
                tags=doc.tags,
                path=doc.path,
                team_id=doc.team_id,
                source="bench",
                expires_at=doc.expires_at,
                version=1,
                created_at=doc.created_at,
                updated_at=doc.created_at,
                embedding=Embedding.of(embedder.model, vector),
            )
            ports.store.create(record)  # type: ignore[attr-defined]
            ports.index.upsert(record)  # type: ignore[attr-defined]


def working_copy(db: BenchDb, dest_dir: Path) -> Path:
    """A private copy of a cached database, for benchmarks that write."""
    dest_dir.mkdir(parents=True, exist_ok=True)
    dest = dest_dir / "mnemo.db"
    for stale in (dest.with_name("mnemo.db-wal"), dest.with_name("mnemo.db-shm")):
        stale.unlink(missing_ok=True)  # a WAL left by an earlier run would corrupt the copy
    shutil.copyfile(db.path, dest)
    return dest
