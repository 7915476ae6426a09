import requests, json

def test_probe(make_config, start_service, fake_model):
    svc = start_service(make_config(voice={"enabled": True}, model={"url": fake_model.url}))
    u = svc.url
    tries = [
        ("GET", "/events?limit=1&limit=2", None), ("GET", "/events?limit=-5", None), ("GET", "/events?limit=99999999999999999999999", None),
        ("GET", "/events?type=", None), ("GET", "/history?limit=abc", None), ("GET", "/voice/history?limit=1e3", None),
        ("PUT", "/voice", b"[1,2"), ("PUT", "/voice", b'{"text": 5}'), ("PUT", "/voice", b'{"text": "ok card here", "why": 5}'),
        ("PUT", "/voice", b'"\\ud800"'), ("PUT", "/voice", b'{"text": "\\ud800 hi"}'),
        ("POST", "/replay", b'{"draft_id": "x"}'), ("POST", "/replay/%00", None), ("POST", "/replay", b'{"draft_id": "x", "timeout_seconds": 1e400}'),
        ("POST", "/replay", b'{"draft_id": "x", "timeout_seconds": true}'),
        ("GET", "/replay?run=", None), ("GET", "/replay?run=%00", None),
        ("POST", "/actors/%00/restart", None), ("POST", "/actors/sleeper/restart?force=maybe", None),
        ("POST", "/sleep?without_brief=1", None), ("GET", "/status?x=1", None),
        ("PUT", "/voice", b'{"text": "' + b"a" * 100 + b'", "why": "' + b"w" * 5000 + b'"}'),
        ("GET", "/openapi.json", None), ("GET", "/metrics", None), ("GET", "/quality", None), ("GET", "/queue", None),
        ("POST", "/nudge", b"junk"), ("GET", "/%ff", None), ("GET", "/events?type=%ff", None),
        ("PUT", "/voice", b'{"text": "card", "why": null, "extra": 1}'),
        ("PUT", "/voice", b'\xff\xfe'),
    ]
    for m, p, body in tries:
        r = requests.request(m, u + p, data=body, headers={"Content-Type": "application/json"} if body else {}, timeout=30)
        print(m, p, (body or b"")[:40], r.status_code, r.text[:200].replace("\n", " "))
