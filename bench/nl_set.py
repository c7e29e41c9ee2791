"""The natural-language class of the quality bench: conversations saved one turn per memory, and
the questions an agent asks about them in plain language. Deterministic (templates and a seeded
``random.Random``); ``bench/data/nl.json`` is its output, kept in the repository
(``python -m bench.nl_set`` rewrites it; a unit test holds the two equal).

Each project is one conversation between two people, in English or Chinese, over about 20
sessions a few days apart. A memory is one turn, ``"<speaker>: <what they said>"``, with the
session's time. The turns are:

* **facts** a speaker tells about their life (a class they took, a pet they adopted, a trip, an
  injury, a new job, ...), each from a template with slots filled from small vocabularies, so the
  same topic words come back across speakers and facts;
* **follow-ups** right after a fact, by the other speaker and back, that repeat its topic word
  ("Pottery sounds like fun! How did you get into it?") but do not hold the answer;
* **chit-chat** that shares the questions' function words and names and nothing else ("That's
  amazing, Caroline! What did you do after that?").

Every fact has one question ("When did Caroline sign up for the pottery class?", "卡罗琳什么时候
报名了陶艺课？"); its evidence is the fact's turn, and for the habits a speaker mentions twice,
both turns. Questions come in four kinds (``when``, ``what``, ``who``, ``how``: the question
word); some share only the speaker's name and one content word with their evidence, a few none
but the name (``How did Caroline get hurt?``).
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / "data" / "nl.json"
SEED = 25
START = datetime(2025, 3, 1, 10, 0, tzinfo=UTC)
EN_PROJECTS = 10
ZH_PROJECTS = 5
FACTS_PER_SPEAKER = 14

EN_NAMES = [
    "Caroline",
    "Melanie",
    "Jonas",
    "Priya",
    "Marcus",
    "Elena",
    "Tobias",
    "Naomi",
    "Gareth",
    "Sofia",
    "Dmitri",
    "Leila",
    "Oliver",
    "Hannah",
    "Rafael",
    "Ingrid",
    "Kwame",
    "Beatriz",
    "Yusuf",
    "Clara",
]
ZH_NAMES = ["小雨", "阿杰", "王芳", "李明", "张伟", "陈静", "刘洋", "赵磊", "周婷", "吴昊"]

CLASSES = [
    "pottery",
    "painting",
    "salsa",
    "yoga",
    "cooking",
    "photography",
    "guitar",
    "swimming",
    "climbing",
    "woodworking",
]
PETS = ["puppy", "kitten", "rabbit", "parrot", "turtle", "hamster"]
PET_NAMES = ["Biscuit", "Luna", "Pepper", "Mochi", "Oscar", "Ziggy", "Clover", "Nugget"]
PLACES = [
    "lake", "beach", "mountains", "aquarium", "national park", "botanical garden", "old harbor", "vineyard",
]  # fmt: skip
COMPANIONS = ["sister", "grandma", "coworker", "neighbor", "cousin", "roommate"]
EVENTS = [
    "charity run", "book club", "support group", "art show", "jazz concert", "job fair", "bake sale",
    "film festival", "science fair",
]  # fmt: skip
BOOKS = [
    "a mystery novel", "a memoir about sailing", "a book about black holes", "a cookbook from Lebanon",
    "a biography of a chess player", "a fantasy trilogy",
]  # fmt: skip
INJURIES = [
    ("twisted my ankle", "twist her ankle"), ("broke my wrist", "break her wrist"),
    ("hurt my back", "hurt her back"), ("sprained my knee", "sprain her knee"),
]  # fmt: skip
ACTIVITIES = ["hiking", "skating", "playing soccer", "moving furniture", "running downhill"]
JOBS = [
    ("nurse", "the children's hospital"), ("designer", "a small game studio"), ("teacher", "the local high school"),
    ("chef", "an Italian restaurant"), ("librarian", "the city library"), ("engineer", "a solar company"),
]  # fmt: skip
INSTRUMENTS = ["violin", "piano", "drums", "cello", "ukulele", "saxophone"]
SUBJECTS = ["sunset over the lake", "portrait of my dog", "field of sunflowers", "stormy sea", "city skyline"]
ROOMS = ["kitchen", "hallway", "bedroom", "office"]
CITIES = ["Lisbon", "Denver", "Osaka", "Toronto", "Nairobi", "Melbourne", "Krakow", "Austin"]
RELATIVES = ["aunt", "uncle", "brother", "father", "mother"]
ORGS = ["animal shelter", "food bank", "community garden", "youth center", "hospice"]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
TALKS = [("climate policy", "town hall"), ("adoption", "community center"), ("coding for kids", "library")]
RACES = ["half marathon", "10k", "triathlon", "trail race"]
OCCASIONS = [("our anniversary", "anniversary"), ("my birthday", "birthday"), ("graduation", "graduation")]
FOODS = ["Thai", "sushi", "barbecue", "tapas", "ramen"]


def _en_fact(r: random.Random, s: str, o: str) -> tuple[list[str], str, str, str]:
    """One English fact: its turns (one or two), the question, its kind, and its topic word."""
    kind = r.randrange(15)
    day = r.choice(WEEKDAYS)
    if kind == 0:
        c = r.choice(CLASSES)
        turn = f"I signed up for a {c} class last {day}, it was so much fun!"
        q = r.choice(
            [
                (f"When did {s} {r.choice(['sign up for', 'enroll in', 'start'])} a {c} class?", "when"),
                (f"What class did {s} sign up for?", "what"),
            ]
        )
        return [turn], *q, c
    if kind == 1:
        p, n = r.choice(PETS), r.choice(PET_NAMES)
        turn = f"We adopted a {p} from the shelter this week! We named it {n}."
        q = r.choice(
            [
                (f"What is the name of {s}'s {p}?", "what"),
                (f"When did {s} {r.choice(['adopt', 'get', 'bring home'])} a {p}?", "when"),
            ]
        )
        return [turn], *q, p
    if kind == 2:
        (done, base), act = r.choice(INJURIES), r.choice(ACTIVITIES)
        turn = f"Ugh, I {done} while {act} on {day}, so I'm resting at home."
        q = r.choice([(f"How did {s} get hurt?", "how"), (f"When did {s} {base}?", "when")])
        return [turn], *q, act.split()[-1]
    if kind == 3:
        e, c = r.choice(EVENTS), r.choice(COMPANIONS)
        turn = f"I went to the {e} with my {c} yesterday, we stayed until the end."
        q = r.choice(
            [
                (f"When did {s} {r.choice(['go to', 'attend', 'visit'])} the {e}?", "when"),
                (f"Who did {s} go to the {e} with?", "who"),
            ]
        )
        return [turn], *q, e.split()[-1]
    if kind == 4:
        b = r.choice(BOOKS)
        turn = f"I finally finished reading {b}, I couldn't put it down."
        return (
            [turn],
            f"What {r.choice(['book', 'novel'])} did {s} {r.choice(['finish reading', 'just read'])}?",
            "what",
            b.split()[-1],
        )
    if kind == 5:
        pl, c = r.choice(PLACES), r.choice(COMPANIONS)
        turn = f"My {c} and I took a trip to the {pl} last weekend. The views were unreal."
        q = r.choice([(f"Where did {s} take a trip with her {c}?", "what"), (f"When did {s} visit the {pl}?", "when")])
        return [turn], *q, pl.split()[-1]
    if kind == 6:
        job, place = r.choice(JOBS)
        turn = f"Big news: I started a new job as a {job} at {place}!"
        q = r.choice(
            [
                (f"What {r.choice(['is', 'does'])} {s}'s new {r.choice(['job', 'work', 'role'])}?", "what"),
                (f"When did {s} start working as a {job}?", "when"),
            ]
        )
        return [turn], *q, job
    if kind == 7:
        i = r.choice(INSTRUMENTS)
        first = f"I've been learning to play the {i} for a few months now."
        again = f"I practiced the {i} for two hours today, my fingers hurt!"
        return [first, again], f"What instrument is {s} learning to play?", "what", i
    if kind == 8:
        sub, room = r.choice(SUBJECTS), r.choice(ROOMS)
        turn = f"I painted a {sub} for my {room}, it's hanging there now."
        q = r.choice([(f"What did {s} paint for the {room}?", "what"), (f"When did {s} paint a {sub}?", "when")])
        return [turn], *q, sub.split()[-1]
    if kind == 9:
        rel, city = r.choice(RELATIVES), r.choice(CITIES)
        turn = f"My {rel} is visiting from {city} next week, I need to clean the guest room."
        q = r.choice([(f"Who is visiting {s} from {city}?", "who"), (f"Where is {s}'s {rel} visiting from?", "what")])
        return [turn], *q, rel
    if kind == 10:
        race, minutes = r.choice(RACES), r.randrange(45, 150)
        turn = f"I ran my first {race} in {minutes} minutes!"
        return [turn], f"How long did {s}'s first {race} take?", "how", race.split()[-1]
    if kind == 11:
        org = r.choice(ORGS)
        first = f"I'm volunteering at the {org} every {day} now."
        again = f"The {org} needed extra hands this {day}, so I stayed late."
        q = r.choice([(f"Where does {s} volunteer?", "what"), (f"When does {s} volunteer at the {org}?", "when")])
        return [first, again], *q, org.split()[-1]
    if kind == 12:
        (occ, short), food = r.choice(OCCASIONS), r.choice(FOODS)
        turn = f"We celebrated {occ} with a {food} dinner at home."
        return [turn], f"What did {s} {r.choice(['do for', 'eat on'])} the {short}?", "how", food
    if kind == 13:
        city = r.choice(CITIES)
        turn = f"I moved to a new apartment in {city}, boxes everywhere!"
        q = r.choice(
            [(f"Where did {s} {r.choice(['move to', 'relocate'])}?", "what"), (f"When did {s} move to {city}?", "when")]
        )
        return [turn], *q, "apartment"
    topic, venue = r.choice(TALKS)
    turn = f"I gave a talk about {topic} at the {venue} on {day}."
    return [turn], f"What did {s} talk about at the {venue}?", "what", topic.split()[-1]


EN_FOLLOW = [
    "{T} sounds like so much fun! How did you get into it?",
    "Wow, {o}! I've always wanted to try {t}.",
    "I did something with {t} a few years ago, what a memory.",
    "{T}? That's so cool! What did you like most about it?",
]
EN_REPLY = [
    "Thanks, {o}! It really means a lot to me.",
    "Haha, you should come with me next time!",
    "Honestly it was the best part of my week.",
]
EN_CHAT = [
    "That's amazing, {o}! What did you do after that?",
    "When did you start feeling that way?",
    "How was your weekend, {o}?",
    "What do you think about it?",
    "I'm so happy for you! Did you take any pictures?",
    "Haha, I know what you mean.",
    "What got you into that, {o}?",
    "Did you go with anyone?",
    "It was a long week, I'm glad it's over.",
    "That's so sweet of you, {o}.",
    "Where do you find the time for all of it?",
    "How did it go in the end?",
    "Who else was there?",
    "I can't wait to hear more about it!",
    "What are you up to this week, {o}?",
    "Good to talk to you again, {o}!",
    "When is the next one?",
    "How long have you been doing that?",
]

ZH_CLASSES = ["陶艺", "油画", "瑜伽", "烹饪", "摄影", "吉他", "游泳", "攀岩"]
ZH_PETS = ["小狗", "小猫", "兔子", "鹦鹉", "乌龟"]
ZH_PLACES = ["西湖", "海边", "黄山", "水族馆", "植物园", "古镇"]
ZH_COMPANIONS = ["姐姐", "奶奶", "同事", "邻居", "表妹", "室友"]
ZH_EVENTS = ["慈善跑", "读书会", "画展", "音乐会", "招聘会", "电影节"]
ZH_BOOKS = ["推理小说", "航海回忆录", "黑洞科普书", "黎巴嫩菜谱", "象棋传记"]
ZH_INJURIES = ["扭伤了脚踝", "摔伤了手腕", "拉伤了后背", "扭伤了膝盖"]
ZH_ACTIVITIES = ["爬山", "滑冰", "踢足球", "搬家具"]
ZH_JOBS = ["护士", "设计师", "老师", "厨师", "图书管理员", "工程师"]
ZH_INSTRUMENTS = ["小提琴", "钢琴", "架子鼓", "大提琴", "尤克里里"]
ZH_CITIES = ["成都", "西安", "厦门", "青岛", "昆明", "大连"]
ZH_DAYS = ["周一", "周二", "周三", "周四", "周五", "周六", "周日"]


def _zh_fact(r: random.Random, s: str, o: str) -> tuple[list[str], str, str, str]:
    kind = r.randrange(9)
    day = r.choice(ZH_DAYS)
    if kind == 0:
        c = r.choice(ZH_CLASSES)
        q = r.choice([(f"{s}什么时候报名了{c}课？", "when"), (f"{s}报名了什么课？", "what")])
        return [f"我上{day}报名了{c}课，特别好玩！"], *q, c
    if kind == 1:
        p = r.choice(ZH_PETS)
        q = r.choice([(f"{s}什么时候领养了{p}？", "when"), (f"{s}领养了什么宠物？", "what")])
        return [f"我们这周从救助站领养了一只{p}！"], *q, p
    if kind == 2:
        inj, act = r.choice(ZH_INJURIES), r.choice(ZH_ACTIVITIES)
        q = r.choice([(f"{s}是怎么受伤的？", "how"), (f"{s}什么时候{inj}？", "when")])
        return [f"唉，我{day}{act}的时候{inj}，只能在家休息。"], *q, act
    if kind == 3:
        e, c = r.choice(ZH_EVENTS), r.choice(ZH_COMPANIONS)
        q = r.choice([(f"{s}和谁一起去了{e}？", "who"), (f"{s}什么时候去的{e}？", "when")])
        return [f"我昨天和{c}一起去了{e}，一直待到结束。"], *q, e
    if kind == 4:
        b = r.choice(ZH_BOOKS)
        return [f"我终于读完了那本{b}，根本停不下来。"], f"{s}读完了哪本书？", "what", b
    if kind == 5:
        pl, c = r.choice(ZH_PLACES), r.choice(ZH_COMPANIONS)
        q = r.choice([(f"{s}什么时候去了{pl}？", "when"), (f"{s}和{c}去哪里旅行了？", "what")])
        return [f"上周末我和{c}去{pl}玩了，风景太美了。"], *q, pl
    if kind == 6:
        job = r.choice(ZH_JOBS)
        q = r.choice([(f"{s}的新工作是什么？", "what"), (f"{s}什么时候开始当{job}的？", "when")])
        return [f"好消息：我开始了新工作，当{job}了！"], *q, job
    if kind == 7:
        i = r.choice(ZH_INSTRUMENTS)
        first, again = f"我学{i}已经好几个月了。", f"今天练了两个小时{i}，手指都疼了！"
        return [first, again], f"{s}在学什么乐器？", "what", i
    city = r.choice(ZH_CITIES)
    q = r.choice([(f"{s}搬到哪里去了？", "what"), (f"{s}什么时候搬到{city}的？", "when")])
    return [f"我搬到{city}的新公寓了，到处都是箱子！"], *q, city


ZH_FOLLOW = ["{t}听起来好有意思！你是怎么开始的？", "哇，{o}！我一直想试试{t}。", "{t}？太酷了！你最喜欢哪一点？"]
ZH_REPLY = ["谢谢你，{o}！这对我意义很大。", "哈哈，下次你跟我一起去吧！", "说真的，这是我这周最开心的事。"]
ZH_CHAT = [
    "太棒了，{o}！那之后你做了什么？",
    "你是什么时候开始有这种感觉的？",
    "{o}，你周末过得怎么样？",
    "你觉得怎么样？",
    "真为你高兴！你拍照了吗？",
    "哈哈，我懂你的意思。",
    "你是怎么喜欢上这个的，{o}？",
    "你和谁一起去的？",
    "这周好漫长，终于结束了。",
    "你哪里来的时间做这么多事？",
    "最后结果怎么样？",
    "还有谁在那里？",
    "下一次是什么时候？",
    "你做这个多久了？",
    "{o}，这周有什么安排？",
]


def _conversation(r: random.Random, project: str, lang: str, names: list[str], start: datetime) -> dict[str, Any]:
    fact_of, follow, reply, chat = (
        (_en_fact, EN_FOLLOW, EN_REPLY, EN_CHAT) if lang == "en" else (_zh_fact, ZH_FOLLOW, ZH_REPLY, ZH_CHAT)
    )
    a, b = names
    # each speaker's facts, shuffled together and spread over the sessions
    facts = [(s, o, *fact_of(r, s, o)) for s, o in ((a, b), (b, a)) for _ in range(FACTS_PER_SPEAKER)]
    r.shuffle(facts)
    sessions = 20
    per_session = [facts[i::sessions] for i in range(sessions)]
    memories: list[dict[str, Any]] = []
    questions: list[dict[str, Any]] = []
    pending: list[tuple[str, str, str]] = []  # second mentions, told in a later session
    when = start
    for n, told in enumerate(per_session):
        when += timedelta(days=r.randrange(3, 9), minutes=r.randrange(600))
        turns: list[tuple[str, str, int | None]] = []  # (speaker, text, question index or None)
        greeting = r.choice(chat)
        turns.append((a if n % 2 else b, greeting.format(o=b if n % 2 else a), None))
        for speaker, other, texts, question, kind, topic in told:
            qi = len(questions)
            questions.append(
                {"id": f"{project}-q{qi}", "project": project, "lang": lang, "query": question, "kind": kind,
                 "relevant": []}
            )  # fmt: skip
            turns.append((speaker, texts[0], qi))
            if len(texts) > 1:
                pending.append((speaker, texts[1], str(qi)))
            t = topic if lang == "zh" else topic.lower()
            turns.append((other, r.choice(follow).format(o=speaker, t=t, T=t[:1].upper() + t[1:]), None))
            turns.append((speaker, r.choice(reply).format(o=other), None))
            for _ in range(r.randrange(2, 6)):
                who, to = (speaker, other) if r.random() < 0.5 else (other, speaker)
                turns.append((who, r.choice(chat).format(o=to), None))
        if pending and r.random() < 0.6:
            speaker, text, qi = pending.pop(0)
            turns.insert(r.randrange(1, len(turns) + 1), (speaker, text, int(qi)))
        for i, (speaker, text, qi) in enumerate(turns):
            at = when + timedelta(seconds=40 * i)
            mid = f"{project}-t{len(memories)}"
            memories.append(
                {"id": mid, "project": project, "lang": lang, "speaker": speaker, "content": f"{speaker}: {text}",
                 "created_at": at.isoformat(), "updated_at": at.isoformat()}
            )  # fmt: skip
            if qi is not None:
                questions[qi]["relevant"].append(mid)
    for speaker, text, qi in pending:  # the second mentions not told yet: a last session
        when += timedelta(days=2)
        mid = f"{project}-t{len(memories)}"
        memories.append(
            {"id": mid, "project": project, "lang": lang, "speaker": speaker, "content": f"{speaker}: {text}",
             "created_at": when.isoformat(), "updated_at": when.isoformat()}
        )  # fmt: skip
        questions[int(qi)]["relevant"].append(mid)
    return {"memories": memories, "questions": questions}


def generate() -> dict[str, Any]:
    r = random.Random(SEED)
    memories: list[dict[str, Any]] = []
    questions: list[dict[str, Any]] = []
    en = list(EN_NAMES)
    r.shuffle(en)
    zh = list(ZH_NAMES)
    r.shuffle(zh)
    plan = [("en", i, [en[(2 * i) % len(en)], en[(2 * i + 1) % len(en)]]) for i in range(EN_PROJECTS)]
    plan += [("zh", i, [zh[(2 * i) % len(zh)], zh[(2 * i + 1) % len(zh)]]) for i in range(ZH_PROJECTS)]
    for lang, i, names in plan:
        conv = _conversation(r, f"nl-{lang}-{i}", lang, names, START + timedelta(days=r.randrange(60)))
        memories += conv["memories"]
        questions += conv["questions"]
    return {"memories": memories, "queries": questions}


def dump(data: dict[str, Any]) -> str:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True) + "\n"


def load() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(DATA.read_text(encoding="utf-8"))
    return data


def main() -> None:
    DATA.write_text(dump(generate()), encoding="utf-8")
    data = load()
    print(f"{DATA}: {len(data['memories'])} memories, {len(data['queries'])} questions, {DATA.stat().st_size} bytes")


if __name__ == "__main__":
    main()
