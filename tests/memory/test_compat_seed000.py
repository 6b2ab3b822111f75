"""Seed 000's AgentSociety memory examples, run as written against `societas.memory.compat`,
and the behaviours the seed states: KeyError on unknown keys, the result format
"- [topic]: text [day: D, time: HH:MM:SS, location: L]" newest first, the society agent's
fields and defaults, topic and day filters, cognition links."""

from __future__ import annotations

import re

import pytest

from societas.memory import GroupMemory, GroupMemoryConfig
from societas.memory.compat import (
    NOTHING,
    Memory,
    MemoryAttribute,
    MemoryConfig,
    default_memory_config_citizen,
    memory_config_societyagent,
)

LINE = re.compile(
    r"^- \[(?P<topic>[^\]]+)\]: (?P<text>.+) \[day: (?P<day>\d+), "
    r"time: (?P<time>\d\d:\d\d:\d\d), location: (?P<location>[^\]]+)\]$"
)


class Environment:
    """The seed's environment: `get_datetime()` is (day, seconds since midnight)."""

    def __init__(self, day: int = 0, t: int = 8 * 3600) -> None:
        self.day, self.t = day, t

    def get_datetime(self) -> tuple[int, int]:
        return self.day, self.t


class SocietyAgent:
    """Stand-in for the seed's agent class: it only holds `memory`."""

    def __init__(self, id: int, name: str, toolbox: object, memory: Memory) -> None:
        self.id, self.name, self.toolbox, self.memory = id, name, toolbox, memory

    async def eat(self) -> str:
        return "a bowl of noodles"

    async def forward(self) -> None:  # the seed's SocietyAgent.forward, as written
        # 获取当前状态
        emotion = await self.memory.status.get("emotion")
        hunger = await self.memory.status.get("hunger_satisfaction")

        # 更新状态
        await self.memory.status.update("thought", "I'm planning my day")

        # 添加活动记忆
        activity_id = await self.memory.stream.add(
            topic="activity", description="I decided to go shopping for groceries"
        )

        # 搜索相关记忆
        past_shopping = await self.memory.stream.search(query="shopping experience", top_k=3)
        self.seen = (emotion, hunger, activity_id, past_shopping)


def parse(text: str) -> list[dict[str, str]]:
    """The lines of a stream search result, each checked against the seed's format."""
    rows = []
    for line in text.splitlines():
        match = LINE.match(line)
        assert match, f"not in the seed's format: {line!r}"
        rows.append(match.groupdict())
    return rows


@pytest.fixture
async def env_memory(bm25_embedder):
    environment = Environment()
    distributions = {"name": "Alice", "gender": "female", "race": "white"}
    # 1. 创建记忆配置 / 2. 创建记忆实例 / 3. 初始化向量化
    memory_config = memory_config_societyagent(distributions)
    memory = Memory(environment=environment, embedding=bm25_embedder, memory_config=memory_config)
    await memory.initialize_embeddings()
    await memory.status.update("position", {"aoi_position": {"aoi_id": 500020313}})
    yield environment, memory
    await memory.close()


async def test_status_api_as_written(env_memory):
    _, memory = env_memory
    # 获取状态
    emotion = await memory.status.get("emotion")
    hunger = await memory.status.get("hunger_satisfaction")
    assert emotion == {"sadness": 5, "joy": 5, "fear": 5, "disgust": 5, "anger": 5, "surprise": 5}
    assert hunger == 0.9
    # 更新状态
    await memory.status.update("emotion", {"joy": 8, "sadness": 2})
    await memory.status.update("hunger_satisfaction", 0.7)
    assert await memory.status.get("emotion") == {"joy": 8, "sadness": 2}
    assert await memory.status.get("hunger_satisfaction") == 0.7
    # 语义搜索
    await memory.status.update("thought", "happy moments at the park with friends")
    results = await memory.status.search("happy moments", top_k=5)
    assert results.splitlines()[0] == "- happy moments at the park with friends"
    assert all(line.startswith("- ") for line in results.splitlines())
    assert await memory.status.search("zyzzyva") == NOTHING
    # get() returns a copy; merge extends dicts and lists
    emotion = await memory.status.get("emotion")
    emotion["joy"] = 0
    assert (await memory.status.get("emotion"))["joy"] == 8
    await memory.status.update("emotion", {"fear": 1}, mode="merge")
    assert await memory.status.get("emotion") == {"joy": 8, "sadness": 2, "fear": 1}
    with pytest.raises(ValueError, match="mode"):
        await memory.status.update("emotion", {}, mode="add")


async def test_unknown_keys_raise_unless_a_default_is_given(env_memory):
    _, memory = env_memory
    with pytest.raises(KeyError, match="mood"):
        await memory.status.get("mood")
    with pytest.raises(KeyError, match="mood"):
        await memory.status.get("mood", None)
    assert await memory.status.get("mood", default_value="calm") == "calm"
    await memory.status.update("mood", "frustrated")  # a new key is added, as in the seed
    assert await memory.status.get("mood") == "frustrated"
    assert await memory.status.get("mood", default_value="calm") == "frustrated"


async def test_society_agent_fields_and_defaults(env_memory):
    _, memory = env_memory
    status = memory.status
    assert await status.get("type") == "citizen"
    assert await status.get("name") == "Alice"  # from the distributions
    assert await status.get("age") == 20
    assert await status.get("firm_id") == 0
    assert await status.get("work_hour_month") == 160
    assert await status.get("energy_satisfaction") == 0.9
    assert await status.get("safety_satisfaction") == 0.4
    assert await status.get("social_satisfaction") == 0.6
    assert await status.get("social_network") == []
    assert await status.get("chat_histories") == {}
    assert (await status.get("thought")).startswith("Currently nothing")
    assert await status.get("race") == "white"
    # every profile field the seed's attitude and thought prompts read is there
    for key in (
        "gender race religion marriage_status residence occupation education personality "
        "consumption family_consumption income skill thought emotion_types attitude emotion"
    ).split():
        await status.get(key)
    defaults = memory_config_societyagent(None)
    assert defaults.attributes["name"].default_or_value == "unknown"
    assert defaults.attributes["name"].whether_embedding
    assert defaults.attributes["thought"].whether_embedding
    assert default_memory_config_citizen() == defaults
    with pytest.raises(KeyError, match="salary"):
        memory_config_societyagent({"salary": 3})
    with pytest.raises(TypeError, match="'age': expected int"):
        memory_config_societyagent({"age": "old"})
    sampled = memory_config_societyagent({"age": lambda: 41})  # a sampler is called
    assert sampled.attributes["age"].default_or_value == 41


async def test_stream_api_as_written(env_memory):
    environment, memory = env_memory
    # 添加事件记忆
    memory_id = await memory.stream.add(
        topic="activity", description="I went to the grocery store and bought food"
    )
    environment.t += 600
    # 添加认知记忆
    cognition_id = await memory.stream.add(
        topic="cognition", description="I feel satisfied after completing my shopping"
    )
    # 关联认知记忆
    await memory.stream.add_cognition_to_memory([memory_id], cognition_id)
    environment.t += 600
    await memory.stream.add(topic="activity", description="Went shopping for shoes at the mall")
    await memory.stream.add(topic="activity", description="Slept in the afternoon")
    # 搜索记忆
    recent_activities = await memory.stream.search(query="shopping", topic="activity", top_k=10)
    rows = parse(recent_activities)
    assert [r["text"] for r in rows] == ["Went shopping for shoes at the mall"]
    assert rows[0] == {
        "topic": "activity",
        "text": "Went shopping for shoes at the mall",
        "day": "0",
        "time": "08:20:00",
        "location": "500020313",
    }
    # 搜索今天的记忆
    environment.t += 600
    await memory.stream.add(topic="work", description="Finished the work report")
    today_memories = await memory.stream.search_today(query="work")
    assert [r["text"] for r in parse(today_memories)] == ["Finished the work report"]
    related = await memory.stream.get_related_cognition(memory_id)
    assert parse(related)[0]["text"] == "I feel satisfied after completing my shopping"


async def test_search_results_are_newest_first_and_filtered_by_day(env_memory):
    environment, memory = env_memory
    texts = []
    for day in range(3):
        environment.day = day
        for hour in (9, 18):
            environment.t = hour * 3600 + 5
            texts.append(f"Shopping trip on day {day} at {hour}")
            await memory.stream.add(topic="economy", description=texts[-1])
    environment.t = 20 * 3600
    await memory.stream.add(topic="social", description="Shopping with Bob, a good chat")
    found = parse(await memory.stream.search("shopping trip", top_k=10))
    assert [r["text"] for r in found[1:]] == texts[::-1]  # newest first
    assert found[0]["text"] == "Shopping with Bob, a good chat"
    assert [(r["day"], r["time"]) for r in found[:3]] == [
        ("2", "20:00:00"),
        ("2", "18:00:05"),
        ("2", "09:00:05"),
    ]
    days = parse(await memory.stream.search("shopping", topic="economy", day_range=(1, 1)))
    assert {r["day"] for r in days} == {"1"} and len(days) == 2
    assert await memory.stream.search("shopping", topic="mobility") == NOTHING
    # search_today without a query: today's memories, newest first, top_k of them
    today = parse(await memory.stream.search_today(top_k=20))
    assert [r["text"] for r in today] == [
        "Shopping with Bob, a good chat",
        texts[5],
        texts[4],
    ]
    assert len(parse(await memory.stream.search_today(top_k=2))) == 2
    assert [r["topic"] for r in parse(await memory.stream.search_today(topic="social"))] == [
        "social"
    ]
    environment.day = 3
    assert await memory.stream.search_today() == NOTHING


async def test_memory_interplay_example_as_written(env_memory):
    environment, memory = env_memory
    social_id = await memory.stream.add(topic="social", description="Met Carol at the mall")
    mobility_id = await memory.stream.add(topic="mobility", description="Took the bus to the mall")
    economy_id = await memory.stream.add(topic="economy", description="Spent 40 on shopping")
    current_day = 0
    # 1. 跨topic的语义搜索（记忆互通）
    shopping_experiences = await memory.stream.search(query="shopping experience", top_k=10)
    # 2. 特定topic的过滤搜索
    social_shopping = await memory.stream.search(
        query="shopping with friends", topic="social", top_k=5
    )
    # 3. 跨行为类型的记忆关联
    cognition_id = await memory.stream.add(
        topic="cognition", description="I had a great shopping day with friends at the mall"
    )
    await memory.stream.add_cognition_to_memory(
        memory_ids=[social_id, mobility_id, economy_id], cognition=cognition_id
    )
    # 4. 基于综合记忆的决策
    all_related_memories = await memory.stream.search(
        query="mall shopping experience", day_range=(current_day - 30, current_day)
    )
    if "positive" in all_related_memories:
        decision = "I'll go to the mall because I had good experiences there"
    else:
        decision = "I'll try a different shopping location"
    assert [r["topic"] for r in parse(shopping_experiences)] == ["economy"]
    assert social_shopping == NOTHING
    assert len(parse(all_related_memories)) == 3  # top_k defaults to 3, as in the seed
    assert decision.startswith("I'll try")
    for memory_id in (social_id, mobility_id, economy_id):
        linked = parse(await memory.stream.get_related_cognition(memory_id))
        assert [r["text"] for r in linked] == [
            "I had a great shopping day with friends at the mall"
        ]
    text_id = await memory.stream.add_cognition_to_memory([social_id], "Carol is kind")
    assert isinstance(text_id, int)
    texts = {r["text"] for r in parse(await memory.stream.get_related_cognition(social_id))}
    assert "Carol is kind" in texts
    assert environment.get_datetime() == (0, 8 * 3600)


async def test_usage_examples_as_written(bm25_embedder):
    environment, toolbox = Environment(), object()
    distributions = None
    # 1. 创建记忆配置（Create Memory Configuration）
    memory_config = memory_config_societyagent(distributions)
    # 2. 创建记忆实例（Create Memory Instance）
    memory = Memory(environment=environment, embedding=bm25_embedder, memory_config=memory_config)
    # 3. 初始化向量化（Initialize Embeddings）
    await memory.initialize_embeddings()
    # 4. 创建智能体（Create Agent）
    agent = SocietyAgent(id=1, name="Alice", toolbox=toolbox, memory=memory)
    await agent.memory.status.update("hunger_satisfaction", 0.2)

    async def agent_behavior():
        hunger = await agent.memory.status.get("hunger_satisfaction")
        if hunger < 0.3:
            await agent.memory.stream.add(
                topic="decision", description="I decided to eat because I'm hungry"
            )
            result = await agent.eat()
            await agent.memory.status.update("hunger_satisfaction", 0.9)
            await agent.memory.stream.add(
                topic="activity", description=f"I ate and now feel satisfied: {result}"
            )

    async def make_decision():
        past_experiences = await agent.memory.stream.search(query="shopping at this store", top_k=5)
        happy_memories = await agent.memory.status.search(query="happy shopping", top_k=3)
        if "positive" in happy_memories:
            decision = "I'll go shopping because I had good experiences before"
        else:
            decision = "I'm hesitant about shopping due to past experiences"
        await agent.memory.stream.add(
            topic="cognition", description=f"Decision: {decision}. Based on: {past_experiences}"
        )

    await agent_behavior()
    assert await memory.status.get("hunger_satisfaction") == 0.9
    await agent.forward()
    await make_decision()
    assert await memory.status.get("thought") == "I'm planning my day"
    _, _, activity_id, past_shopping = agent.seen
    assert [r["text"] for r in parse(past_shopping)] == ["I decided to go shopping for groceries"]
    today = parse(await memory.stream.search_today(top_k=20))
    assert [r["topic"] for r in today] == ["cognition", "activity", "activity", "decision"]
    assert today[0]["text"].startswith("Decision: I'm hesitant about shopping")
    assert {r["location"] for r in today} == {"unknown"}  # no position set
    assert isinstance(activity_id, int)
    await memory.close()


async def test_case_studies_as_written(env_memory):
    environment, memory = env_memory
    # 案例1：飓风 — 1. 灾难前状态记忆
    await memory.status.update("safety_satisfaction", 0.9)
    await memory.status.update("emotion", {"joy": 7, "fear": 2, "sadness": 1})
    await memory.status.update("current_need", "social")
    # 2. 灾难事件记忆
    await memory.stream.add(topic="disaster", description="飓风警报响起，需要立即撤离")
    await memory.stream.add(topic="evacuation", description="前往避难所，路上遇到交通堵塞")
    # 3. 认知更新
    await memory.stream.add(
        topic="cognition", description="这次飓风让我意识到安全的重要性，需要更好的应急准备"
    )
    await memory.status.update(
        "attitude",
        {
            "emergency_preparedness": 9,  # 从3提升到9
            "government_trust": 6,  # 从8降低到6
        },
    )
    # 4. 记忆搜索与决策
    current_day = environment.day
    past_disasters = await memory.stream.search(
        query="飓风 撤离 安全", topic="disaster", day_range=(current_day - 30, current_day)
    )
    if "positive" in past_disasters:
        decision = "相信政府指导，按计划撤离"
    else:
        decision = "自主选择更安全的撤离路线"
    assert [r["text"] for r in parse(past_disasters)] == ["飓风警报响起，需要立即撤离"]
    assert decision == "自主选择更安全的撤离路线"
    assert await memory.status.get("attitude") == {
        "emergency_preparedness": 9,
        "government_trust": 6,
    }

    # 案例2：社会极化 — 态度、信息接触、态度更新、信息茧房
    await memory.status.update(
        "attitude", {"gun_control": 3, "immigration": 4, "climate_change": 2}
    )
    environment.day = 1
    await memory.stream.add(
        topic="information", description="阅读了关于枪支管制的新研究，显示管制措施效果有限"
    )
    await memory.stream.add(
        topic="social", description="与朋友Bob讨论了枪支管制问题，我们都认为现有法律已经足够"
    )
    gun_control_info = await memory.stream.search(query="枪支管制 gun control", top_k=10)
    assert {r["topic"] for r in parse(gun_control_info)} == {"information", "social"}
    await memory.status.update("attitude", {"gun_control": 2})
    current_day = environment.day
    similar_views = await memory.stream.search(
        query="枪支管制 反对 问题", topic="information", day_range=(current_day - 7, current_day)
    )
    attitude_strength = 1.0
    if len(similar_views) > 5:
        attitude_strength += 0.1
    assert [r["topic"] for r in parse(similar_views)] == ["information"]
    assert attitude_strength == 1.1

    # 案例3：UBI — 政策前后的工作与消费记忆
    await memory.stream.add(topic="work", description="每天工作8小时，月收入5000元，生活压力较大")
    await memory.stream.add(topic="consumption", description="主要购买生活必需品，很少进行娱乐消费")
    environment.day = policy_start_day = 2
    await memory.stream.add(
        topic="policy", description="政府宣布实施全民基本收入，每月额外获得2000元"
    )
    await memory.status.update("income", 7000)  # 5000 + 2000
    await memory.status.update("ubi_benefit", 2000)
    await memory.stream.add(
        topic="work_decision", description="由于有了基本收入保障，决定减少工作时间，更多陪伴家人"
    )
    await memory.stream.add(
        topic="consumption", description="开始购买一些非必需品，如书籍和娱乐用品"
    )
    current_day = environment.day
    work_memories = await memory.stream.search(
        query="工作 work 收入 income", topic="work", day_range=(policy_start_day, current_day)
    )
    consumption_memories = await memory.stream.search(
        query="消费 consumption 购买 purchase",
        topic="consumption",
        day_range=(policy_start_day, current_day),
    )
    assert work_memories == NOTHING  # the work memory is from before the policy
    assert [r["text"] for r in parse(consumption_memories)] == [
        "开始购买一些非必需品，如书籍和娱乐用品"
    ]
    assert await memory.status.get("income") == 7000
    assert await memory.status.get("ubi_benefit") == 2000


async def test_cognition_updates_read_what_they_need(env_memory):
    environment, memory = env_memory
    await memory.status.update("attitude", {"public transport": 6})
    await memory.stream.add(topic="mobility", description="The public transport was late again")
    # attitude_update's reads, as written
    attitude = await memory.status.get("attitude")
    prompt_data = {
        key: await memory.status.get(key)
        for key in (
            "gender age race religion marriage_status residence occupation education "
            "personality consumption family_consumption income skill thought emotion_types"
        ).split()
    }
    for topic in attitude:
        incident_str = await memory.stream.search(query=topic, top_k=20)
        assert parse(incident_str)[0]["text"] == "The public transport was late again"
    emotion = await memory.status.get("emotion")
    prompt_data.update({k: emotion[k] for k in ("sadness", "joy", "fear", "disgust", "anger")})
    assert prompt_data["age"] == 20 and prompt_data["gender"] == "female"
    # thought_update's reads and writes, as written
    incident_str = await memory.stream.search_today(top_k=20)
    assert parse(incident_str)[0]["topic"] == "mobility"
    thought = "Currently the buses are unreliable, I think I will walk"
    await memory.status.update("thought", thought)
    await memory.stream.add(topic="cognition", description=thought)
    assert parse(await memory.stream.search_today(top_k=20))[0]["text"] == thought
    assert environment.get_datetime()[0] == 0


async def test_custom_agent_config_as_written(bm25_embedder):
    def memory_config_custom_agent():
        attributes = {
            "custom_attribute": MemoryAttribute(
                name="custom_attribute",
                type=str,
                default_or_value="default_value",
                description="Custom memory attribute",
                whether_embedding=True,
            )
        }
        return MemoryConfig(attributes=attributes)

    memory = Memory(Environment(), bm25_embedder, memory_config_custom_agent())
    await memory.initialize_embeddings()
    assert await memory.status.get("custom_attribute") == "default_value"
    assert await memory.status.search("default_value") == "- My custom_attribute is default_value"
    with pytest.raises(KeyError, match="position"):
        await memory.status.get("position")
    await memory.stream.add(topic="other", description="A custom day")  # no position: unknown
    assert parse(await memory.stream.search("custom day"))[0]["location"] == "unknown"
    await memory.close()


async def test_without_an_environment_the_stream_uses_the_groups_clock(bm25_embedder):
    memory = Memory(environment=None, embedding=bm25_embedder, memory_config=None)
    await memory.initialize_embeddings()
    assert await memory.status.get("age") == 20  # the society agent's config by default
    await memory.stream.add(topic="social", description="Talked about the traffic jam")
    memory.group.clock.set(1, 9 * 3600.0)
    await memory.stream.add(topic="social", description="Traffic again this morning")
    rows = parse(await memory.stream.search("traffic"))
    assert [(r["day"], r["time"]) for r in rows] == [("1", "09:00:00"), ("0", "00:00:00")]
    with pytest.raises(TypeError, match="embedding"):
        Memory(Environment(), embedding="bm25")
    await memory.close()


# Seed 000's "minimal code skeleton", verbatim. Run with two substitutions: the imports name
# societas.memory.compat, and `SparseTextEmbedding()` (fastembed needs a model name and a
# download) is the bundled BM25 model, the same fastembed class.
SKELETON = """
from agentsociety.memory.memory import Memory
from agentsociety.agent.memory_config_generator import default_memory_config_citizen
from fastembed import SparseTextEmbedding

# 1) 初始化
embedding = SparseTextEmbedding()
memory = Memory(environment=None, embedding=embedding, memory_config=default_memory_config_citizen())
await memory.initialize_embeddings()

# 2) Insert: 从环境接收到新事件，写入流记忆
event_id = await memory.stream.add_memory_node(
    text="Talked with neighbor about traffic jam",
    topic="social"
)

# 3) Update: 更新状态记忆
await memory.status.update({"mood": "frustrated"})

# 4) Retrieval: 按上下文查询相关记忆
hits = await memory.stream._vectorstore.similarity_search(query="commute issue", k=3)
"""  # noqa: E501 (verbatim)


async def test_the_minimal_skeleton_as_written():
    from societas.memory.embedding import EmbeddingConfig

    folder = str(EmbeddingConfig().bm25_path)
    code = (
        SKELETON.replace("agentsociety.memory.memory", "societas.memory.compat")
        .replace("agentsociety.agent.memory_config_generator", "societas.memory.compat")
        .replace(
            "SparseTextEmbedding()",
            f"SparseTextEmbedding('Qdrant/bm25', specific_model_path={folder!r})",
        )
    )
    body = "\n".join("    " + line for line in code.splitlines())
    scope: dict = {}
    exec(f"async def skeleton():\n{body}\n    return locals()", scope)
    found = await scope["skeleton"]()
    memory = found["memory"]
    assert await memory.status.get("mood") == "frustrated"
    assert found["event_id"] >= 0
    assert found["hits"] == []  # nothing about a commute: BM25 finds no shared word
    more = await memory.stream._vectorstore.similarity_search(query="traffic jam", k=3)
    assert [(h.text, h.topic) for h in more] == [
        ("Talked with neighbor about traffic jam", "social")
    ]
    await memory.close()


async def test_a_fastembed_model_is_accepted_as_the_embedding():
    from fastembed import SparseTextEmbedding

    from societas.memory.embedding import EmbeddingConfig

    folder = str(EmbeddingConfig().bm25_path)
    embedding = SparseTextEmbedding("Qdrant/bm25", specific_model_path=folder)
    memory = Memory(Environment(), embedding, memory_config_societyagent({"name": "Ann"}))
    await memory.stream.add(topic="social", description="Talked with neighbor about traffic jam")
    assert parse(await memory.stream.search("traffic"))[0]["topic"] == "social"
    assert await memory.status.search("name Ann") == "- My name is Ann"
    await memory.close()


async def test_one_agent_of_a_shared_group(tmp_path, bm25_embedder):
    group = GroupMemory(GroupMemoryConfig(), root=tmp_path, embedder=bm25_embedder)
    await group.add_agents({1: {"name": "Ada", "position": "bakery"}, 2: {"name": "Ben"}})
    group.clock.set(0, 8 * 3600.0)
    ada, ben = Memory(group=group, agent_id=1), Memory(group=group, agent_id=2)
    first = await ada.stream.add(topic="social", description="Talked with Ben about bread")
    group.clock.set(0, 9 * 3600.0)
    await ada.stream.add(topic="economy", description="Bought bread for 3")
    rows = parse(await ada.stream.search("bread", top_k=5))
    assert [r["time"] for r in rows] == ["09:00:00", "08:00:00"]  # newest first
    assert {r["location"] for r in rows} == {"bakery"}
    assert await ben.stream.search("bread") == NOTHING
    await ada.status.update("mood", 0.8)
    with pytest.raises(KeyError, match="mood"):
        await ben.status.get("mood")  # the key exists for the group, not for Ben
    assert await ben.status.get("mood", default_value=0.5) == 0.5
    await ada.stream.add_cognition_to_memory(first, "Ben bakes")
    assert parse(await ada.stream.get_related_cognition(first))[0]["text"] == "Ben bakes"
    with pytest.raises(KeyError, match="7"):
        Memory(group=group, agent_id=7)
    with pytest.raises(ValueError, match="group"):
        Memory(Environment(), bm25_embedder, group=group, agent_id=1)
    await group.close()
