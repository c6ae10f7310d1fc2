"""The phone view's words in English, 中文 and Português: every key in every language, with the same
`{placeholders}` (tests/phone/test_strings.py)."""

from __future__ import annotations

STRINGS: dict[str, dict[str, str]] = {
    "en": {
        "pair_title": "Pair this phone",
        "pair_help": "On the computer, open Settings → Phone → Pair a phone, then scan the code or type it here.",
        "code": "Pairing code",
        "device_name": "Name of this phone",
        "pair": "Pair",
        "fingerprint": "Certificate {fingerprint}: it should match the one on the computer.",
        "unpaired": "This phone was unpaired on the computer. Pair it again to continue.",
        "conversations": "Conversations",
        "empty": "No conversations yet. Start one on the computer.",
        "unread": "{count} new",
        "waiting": "approval waiting",
        "running": "working…",
        "floor": "Floor: {name}",
        "refresh": "Refresh",
        "back": "Back",
        "theme": "Light or dark",
        "message": "Message (use @ to address an agent)",
        "send": "Send",
        "stop": "Stop",
        "attach": "Attach a photo or file",
        "attached": "Attached {name}",
        "you": "You",
        "assistant": "Assistant",
        "stopped": "Stopped",
        "failed": "Failed: {reason}",
        "approval": "{tool} asks for permission",
        "once": "Allow once",
        "run": "Allow this run",
        "deny": "Deny",
        "answered_allow": "Allowed",
        "answered_deny": "Denied",
        "answered_by": "{answer} on {who}",
        "desktop": "the computer",
        "offline": "Reconnecting…",
        "error": "Something went wrong: {reason}",
    },
    "zh": {
        "pair_title": "配对这部手机",
        "pair_help": "在电脑上打开 设置 → 手机 → 配对手机，然后扫描二维码或在此输入配对码。",
        "code": "配对码",
        "device_name": "这部手机的名称",
        "pair": "配对",
        "fingerprint": "证书 {fingerprint}：应与电脑上显示的一致。",
        "unpaired": "这部手机已在电脑上取消配对。请重新配对以继续。",
        "conversations": "对话",
        "empty": "还没有对话。请在电脑上开始一个。",
        "unread": "{count} 条新消息",
        "waiting": "等待批准",
        "running": "工作中…",
        "floor": "发言权：{name}",
        "refresh": "刷新",
        "back": "返回",
        "theme": "浅色或深色",
        "message": "消息（用 @ 指定智能体）",
        "send": "发送",
        "stop": "停止",
        "attach": "附加照片或文件",
        "attached": "已附加 {name}",
        "you": "你",
        "assistant": "助手",
        "stopped": "已停止",
        "failed": "失败：{reason}",
        "approval": "{tool} 请求许可",
        "once": "允许一次",
        "run": "本次运行内允许",
        "deny": "拒绝",
        "answered_allow": "已允许",
        "answered_deny": "已拒绝",
        "answered_by": "{answer}（{who}）",
        "desktop": "电脑",
        "offline": "正在重新连接…",
        "error": "出错了：{reason}",
    },
    "pt": {
        "pair_title": "Emparelhar este telemóvel",
        "pair_help": "No computador, abra Definições → Telemóvel → Emparelhar, depois leia o código ou escreva-o aqui.",
        "code": "Código de emparelhamento",
        "device_name": "Nome deste telemóvel",
        "pair": "Emparelhar",
        "fingerprint": "Certificado {fingerprint}: deve ser igual ao do computador.",
        "unpaired": "Este telemóvel foi desemparelhado no computador. Emparelhe-o de novo para continuar.",
        "conversations": "Conversas",
        "empty": "Ainda não há conversas. Comece uma no computador.",
        "unread": "{count} novas",
        "waiting": "aprovação à espera",
        "running": "a trabalhar…",
        "floor": "Palavra: {name}",
        "refresh": "Atualizar",
        "back": "Voltar",
        "theme": "Claro ou escuro",
        "message": "Mensagem (use @ para falar com um agente)",
        "send": "Enviar",
        "stop": "Parar",
        "attach": "Anexar foto ou ficheiro",
        "attached": "Anexado {name}",
        "you": "Você",
        "assistant": "Assistente",
        "stopped": "Parado",
        "failed": "Falhou: {reason}",
        "approval": "{tool} pede permissão",
        "once": "Permitir uma vez",
        "run": "Permitir nesta execução",
        "deny": "Recusar",
        "answered_allow": "Permitido",
        "answered_deny": "Recusado",
        "answered_by": "{answer} em {who}",
        "desktop": "o computador",
        "offline": "A ligar de novo…",
        "error": "Algo correu mal: {reason}",
    },
}


def language(tags: list[str]) -> str:
    """The first of the phone's preferred languages we speak (zh-Hans-CN → zh, pt-BR → pt), else English."""
    for tag in tags:
        short = tag.replace("_", "-").split("-")[0].lower()
        if short in STRINGS:
            return short
    return "en"


class Words:
    def __init__(self, lang: str) -> None:
        self.lang = lang if lang in STRINGS else "en"

    def __call__(self, key: str, **values: object) -> str:
        text = STRINGS[self.lang].get(key) or STRINGS["en"][key]
        return text.format(**values) if values else text
