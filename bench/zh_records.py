"""Chinese records with hard negatives for the retrieval-quality set.

Workplace knowledge bases are full of near-identical documents: thirty weekly reports in one template,
forty incident tickets, a product sheet per model, an office page per city. Told apart only by a name,
a code or one attribute, they are where a dense model blurs and keyword search earns its keep — and
the hand-written Chinese passages (bench/data/zh_passages.tsv) have none of them.

The records are generated from fixed pools with a fixed seed, so the corpus and its labels are the same
on every run. Two kinds of query come with them:

- known-item: names the record (a project, a ticket, an error code, a model, a city) and asks about one
  of its fields, in words that need not match the record's;
- topical: asks for every record with some property ("projects where a key person left", "incidents
  caused by an expired certificate"), worded differently from the records; all of those are relevant.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

SEED = 7

PEOPLE = "张伟 王芳 李娜 刘洋 陈静 杨磊 赵敏 黄婷 周杰 吴昊 徐丽 孙强 马超 朱琳 胡斌 郭鹏 何雪 高翔 林峰 罗佳".split()
PROJECTS = (
    "星河 青松 北极光 蓝鲸 飞燕 赤兔 白鹭 雪豹 金桥 银杏 长风 远航 晨曦 磐石 灯塔 "
    "火种 天枢 玉衡 开阳 摇光 凤凰 麒麟 神舟 鲲鹏 海燕 山河 星火 春雷 秋实 冬青"
).split()
STAGES = ("需求分析", "开发", "联调测试", "上线准备", "试运行")
# (what the report says, how a person asks for it)
RISKS = (
    ("硬件供应商交货推迟两周，部分模块无法按时联调", "哪些项目受到供货延期的影响"),
    ("核心开发人员离职，工作交接还没有完成", "哪些项目有骨干成员走了"),
    ("客户需求反复修改，范围一直不稳定", "需求老是变来变去的项目"),
    ("依赖的外部接口经常超时，联调进展缓慢", "哪些项目卡在第三方服务不稳定上"),
    ("实际花费已经超过原定预算，需要追加审批", "哪些项目的钱花超了"),
    ("安全评审发现高危漏洞，必须整改后才能上线", "安全检查没通过的项目"),
)
DONE = (
    "完成了登录模块的重构",
    "完成了数据迁移脚本",
    "完成了第一轮用户访谈",
    "修复了二十多个缺陷",
    "搭建了自动化测试流水线",
    "完成了接口文档评审",
    "上线了灰度版本",
    "完成了性能压测",
)

SERVICES = ("支付服务", "登录服务", "搜索服务", "消息推送", "订单系统", "报表平台", "文件存储", "用户中心")
CAUSES = (
    ("TLS 证书到期后没有及时续签，客户端握手失败", "因为证书失效导致连不上的事故"),
    ("日志把磁盘写满，服务无法再写入数据", "硬盘空间不够引起的故障"),
    ("发布时配置文件里的数据库地址写错", "改错配置造成的事故"),
    ("下游依赖响应变慢，连接池被耗尽", "调用别的服务太慢把系统拖垮的故障"),
    ("新版本存在内存泄漏，进程被系统强制结束", "程序占用内存越来越多最后崩溃的事故"),
    ("域名解析记录被误删，用户访问不到", "DNS 记录出错导致的故障"),
)
FIXES = ("回滚到上一个版本", "扩容两台服务器", "手动重启服务", "修正配置后重新发布", "切换到备用集群")

PRODUCT_TYPES = (
    ("扫地机器人", "续航{n}分钟"),
    ("空气净化器", "适用面积{n}平方米"),
    ("加湿器", "水箱容量{n}百毫升"),
    ("蓝牙耳机", "续航{n}小时"),
    ("电热水壶", "功率{n}百瓦"),
)
WARRANTIES = ("一年", "两年", "三年")
FEATURES = (
    ("支持语音助手控制", "能用说话来操作的产品"),
    ("噪音低于三十分贝，适合卧室使用", "晚上睡觉开着也安静的产品"),
    ("机身防水，可以直接冲洗", "可以用水洗的产品"),
    ("支持手机应用远程控制", "能在手机上遥控的产品"),
)

CITIES = ("北京 上海 广州 深圳 成都 杭州 武汉 西安 南京 重庆 天津 苏州 长沙 郑州 青岛 厦门 大连 合肥 昆明 沈阳").split()
DOORS = (
    ("刷工牌进门", "哪些办公室进门要刷卡"),
    ("人脸识别进门", "哪些办公室是刷脸进门的"),
    ("输入门禁密码进门", "哪些办公室进门要输密码"),
)
ROADS = "人民路 建设路 解放路 中山路 和平路 长江路 黄河路 科技路 文化路 滨江路".split()
DISTRICTS = "高新区 开发区 滨湖区 经开区 中心区".split()

NUMERALS = "零一二三四五六七八九"


def chinese_number(n: int) -> str:
    """1–99 in Chinese numerals, as the records write them."""
    tens, ones = divmod(n, 10)
    if tens == 0:
        return NUMERALS[ones]
    return ("" if tens == 1 else NUMERALS[tens]) + "十" + (NUMERALS[ones] if ones else "")


Record = tuple[str, str]  # (doc id, text)
Query = tuple[str, str, set[str]]  # (kind, query, relevant doc ids)


def records() -> tuple[list[Record], list[Query]]:
    rng = random.Random(SEED)
    docs: list[Record] = []
    queries: list[Query] = []
    for make in (_projects, _incidents, _products, _offices):
        made_docs, made_queries = make(rng)
        docs += made_docs
        queries += made_queries
    return docs, queries


def _projects(rng: random.Random) -> tuple[list[Record], list[Query]]:
    docs, queries, by_risk, by_owner = [], [], {}, {}
    for i, name in enumerate(PROJECTS):
        doc_id = f"zh-project/{i + 1:02d}"
        owner = rng.choice(PEOPLE)
        risk = rng.randrange(len(RISKS))
        budget = rng.randrange(50, 400, 10)
        used = int(budget * rng.uniform(0.2, 0.95)) if risk != 4 else int(budget * rng.uniform(1.05, 1.3))
        text = (
            f"【{name}项目周报】负责人：{owner}。"
            f"当前阶段：{rng.choice(STAGES)}，整体进度约{rng.randrange(10, 95, 5)}%。"
            f"本周{rng.choice(DONE)}。主要风险：{RISKS[risk][0]}。"
            f"预算执行：已使用{used}万元，总预算{budget}万元。"
        )
        docs.append((doc_id, text))
        by_risk.setdefault(risk, set()).add(doc_id)
        by_owner.setdefault(owner, set()).add(doc_id)
        ask = i % 3
        if ask == 0:
            queries.append(("known", f"{name}项目是谁在管", {doc_id}))
        elif ask == 1:
            queries.append(("known", f"{name}项目做到哪一步了", {doc_id}))
        else:
            queries.append(("known", f"{name}项目还剩多少经费", {doc_id}))
    queries += [("topical", RISKS[r][1], ids) for r, ids in sorted(by_risk.items())]
    for owner, ids in sorted(by_owner.items())[:6]:
        queries.append(("known", f"{owner}负责的项目", ids))
    return docs, queries


def _incidents(rng: random.Random) -> tuple[list[Record], list[Query]]:
    docs, queries, by_cause, by_service = [], [], {}, {}
    codes = rng.sample(range(1000, 9999), 40)
    for i in range(40):
        doc_id = f"zh-incident/{i + 1:02d}"
        ticket = f"INC-{2026_0000 + 137 * (i + 1)}"
        service = rng.choice(SERVICES)
        cause = rng.randrange(len(CAUSES))
        text = (
            f"故障单 {ticket}：{rng.randint(1, 12)}月{rng.randint(1, 28)}日，{service}出现异常，错误码 E{codes[i]}。"
            f"持续约{chinese_number(rng.randint(5, 90))}分钟，期间部分用户无法正常使用。"
            f"原因：{CAUSES[cause][0]}。处理：{rng.choice(FIXES)}。"
        )
        docs.append((doc_id, text))
        by_cause.setdefault(cause, set()).add(doc_id)
        by_service.setdefault(service, set()).add(doc_id)
        if i % 2 == 0:
            queries.append(("known", f"E{codes[i]} 这个报错是怎么回事", {doc_id}))
        elif i % 4 == 1:
            queries.append(("known", f"{ticket} 是什么原因", {doc_id}))
    queries += [("topical", CAUSES[c][1], ids) for c, ids in sorted(by_cause.items())]
    queries += [("topical", f"{s}以前出过什么问题", ids) for s, ids in sorted(by_service.items())]
    return docs, queries


def _products(rng: random.Random) -> tuple[list[Record], list[Query]]:
    docs, queries, by_feature = [], [], {}
    models = rng.sample(range(100, 990, 10), 30)
    for i in range(30):
        doc_id = f"zh-product/{i + 1:02d}"
        model = f"{rng.choice('ABHKMQTXZ')}{rng.choice('ABHKMQTXZ')}-{models[i]}"
        kind, spec = PRODUCT_TYPES[i % len(PRODUCT_TYPES)]
        warranty = rng.randrange(len(WARRANTIES))
        feature = rng.randrange(len(FEATURES))
        text = (
            f"{model} {kind}：重量{rng.randint(2, 60) / 10}公斤，{spec.format(n=chinese_number(rng.randint(12, 99)))}。"
            f"保修{WARRANTIES[warranty]}，建议零售价{rng.randrange(199, 3999, 100)}元。特点：{FEATURES[feature][0]}。"
        )
        docs.append((doc_id, text))
        by_feature.setdefault(feature, set()).add(doc_id)
        if i % 2 == 0:
            queries.append(("known", f"{model} 坏了能免费修多久", {doc_id}))
        elif i % 4 == 1:
            queries.append(("known", f"{model} 卖多少钱", {doc_id}))
    queries += [("topical", FEATURES[f][1], ids) for f, ids in sorted(by_feature.items())]
    return docs, queries


def _offices(rng: random.Random) -> tuple[list[Record], list[Query]]:
    docs, queries, by_door, by_line = [], [], {}, {}
    for i, city in enumerate(CITIES):
        doc_id = f"zh-office/{i + 1:02d}"
        door = rng.randrange(len(DOORS))
        line = rng.randint(1, 6)
        text = (
            f"{city}办公室：地址在{rng.choice(DISTRICTS)}{rng.choice(ROADS)}{rng.randint(1, 300)}号"
            f"{chinese_number(rng.randint(3, 28))}层，靠近地铁{chinese_number(line)}号线。"
            f"{DOORS[door][0]}，访客需要在前台登记。无线网络名称是 Orkas-{i + 1:02d}，密码向行政索取。"
            f"常驻员工约{rng.randrange(20, 400, 10)}人。"
        )
        docs.append((doc_id, text))
        by_door.setdefault(door, set()).add(doc_id)
        by_line.setdefault(line, set()).add(doc_id)
        if i % 2 == 0:
            queries.append(("known", f"{city}那边的办公地点在哪", {doc_id}))
        else:
            queries.append(("known", f"去{city}办公室怎么连网", {doc_id}))
    queries += [("topical", DOORS[d][1], ids) for d, ids in sorted(by_door.items())]
    for line, ids in sorted(by_line.items())[:3]:
        queries.append(("topical", f"坐地铁{chinese_number(line)}号线能到的办公室", ids))
    return docs, queries


def summary() -> Iterator[str]:
    docs, queries = records()
    yield f"{len(docs)} records, {len(queries)} queries"
    for kind in ("known", "topical"):
        yield f"  {kind}: {sum(q[0] == kind for q in queries)}"
