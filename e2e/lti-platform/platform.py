"""A real LTI 1.3 platform for the Lab's end-to-end tests, built on the PyPI package
`lti1p3platform` (OIDC login initiation, the signed launch, the OAuth 2 token endpoint that
verifies the tool's client assertion against the tool's JWKS, and AGS scores), served with the
standard library's HTTP server on loopback. Only the web glue is ours; every LTI message is
built, signed and checked by the package.

Routes (all GET unless said):
  /jwks                       the platform's public keys
  /launch?user=&name=&target=&tamper=&locale=
                              a learner clicks the activity: OIDC login initiation to the tool
  /authorize                  the tool's authentication request: the auto-posted launch form
  /course?…                   a course page with the activity in an iframe (/launch?…); the page
                              is also the platform's postMessage storage (lti.put_data,
                              lti.get_data); storage=1 names it as lti_storage_target (_parent),
                              replay=1 frames /replay instead (a launch started elsewhere)
  /replay                     posts the last launch's id_token and state a second time
  /deep-link?user=&locale=    a teacher opens the tool picker: a Deep Linking request
  POST /deep-link-return      the tool's LtiDeepLinkingResponse: the package checks it, the
                              links it holds are added to the course (with a line item each
                              where the link asks for one)
  /launch?link=K&user=        a learner opens the course's K-th added link
  POST /token                 client-credentials grant (the tool's signed JWT assertion)
  POST /lineitems/<id>/scores AGS score service
  /lineitems/<id>/results     AGS result service (bearer token)
  /gradebook.json             what the gradebook holds (the platform's own view, for the test)
  /links.json                 the links the tool added, and their line items
  /.well-known/openid-configuration
                              the platform's configuration for LTI Dynamic Registration
  /dynamic-registration?tool= an administrator registers a tool: its registration URL opens in an
                              iframe with openid_configuration and a registration_token; the page
                              records the tool's org.imsglobal.lti.close message
  POST /register              the registration endpoint (bearer registration_token): checks the
                              tool's request, answers with a new client id and deployment
  /registrations.json         the tools registered that way
  /launch?client=             a launch under a dynamically registered client

Dynamic Registration is not in lti1p3platform 0.1.8: the three routes for it are this harness's,
written from the LTI Dynamic Registration 1.0 specification; a launch under the new client runs
through the package as every other launch.

`tamper` makes the launch one a tool must refuse: other-key, expired, wrong-audience,
unknown-deployment. The registration (client id, deployment) is printed as JSON on start.
"""

import html
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlencode, urlparse

from jwcrypto.jwk import JWK
from lti1p3platform.ltiplatform import LTI1P3PlatformConfAbstract
from lti1p3platform.message_launch import LTIAdvantageMessageLaunchAbstract
from lti1p3platform.oidc_login import OIDCLoginAbstract
from lti1p3platform.registration import Registration
from lti1p3platform.request import Request
from lti1p3platform.score import UpdateScoreStatus
from lti1p3platform.service_connector import AssignmentsGradesService

CLIENT_ID = "gradlab-lab"
DEPLOYMENT_ID = "deployment-1"
LINEITEM_ID = "1"


def pem_pair():
    key = JWK.generate(kty="RSA", size=2048)
    return key.export_to_pem(private_key=True, password=None).decode(), key.export_to_pem().decode()


PLATFORM_PRIVATE, PLATFORM_PUBLIC = pem_pair()
# A second key with the first key's kid: a launch signed by it must fail the signature check.
OTHER_PRIVATE, _ = pem_pair()

STATE = {"last_launch": None, "scores": [], "hints": {}, "links": [], "lineitems": {LINEITEM_ID: {"scoreMaximum": 100, "label": "Quiz"}}}
DEEP_LINK_DATA = "platform-data-7"
STATE["registrations"] = []
STATE["registration_tokens"] = set()
TOOL_CONFIGURATION = "https://purl.imsglobal.org/spec/lti-tool-configuration"
LOCK = threading.Lock()


class PublishedKidRegistration(Registration):
    """Names the published key's kid whatever key signs, so a forged launch reaches the signature check."""

    def get_kid(self):
        return Registration.get_jwk(PLATFORM_PUBLIC)["kid"]


def registration_of(client):
    """A dynamically registered client (its id, deployment and the URLs the tool gave)."""
    with LOCK:
        return next((r for r in STATE["registrations"] if r["client_id"] == client), None)


class Platform(LTI1P3PlatformConfAbstract):
    def init_platform_config(self, base=None, tool=None, private_key=None, client=None, **kwargs):
        registered = registration_of(client) if client else None
        login = registered["initiate_login_uri"] if registered else f"{tool}/lti/login"
        launch = registered["redirect_uris"][0] if registered else f"{tool}/lti/launch"
        keys = registered["jwks_uri"] if registered else f"{tool}/lti/jwks.json"
        self._registration = (
            PublishedKidRegistration()
            .set_iss(base)
            .set_client_id(registered["client_id"] if registered else CLIENT_ID)
            .set_deployment_id(registered["deployment_id"] if registered else DEPLOYMENT_ID)
            .set_oidc_login_url(login)
            .set_launch_url(launch)
            .set_deeplink_launch_url(launch)
            .set_tool_key_set_url(keys)
            .set_platform_public_key(PLATFORM_PUBLIC)
            .set_platform_private_key(private_key or PLATFORM_PRIVATE)
        )

    def get_registration_by_params(self, **kwargs):
        return self._registration


class PlainRequest(Request):
    def build_metadata(self, request):
        return request


class Login(OIDCLoginAbstract):
    def set_lti_message_hint(self, **kwargs):
        self._lti_message_hint = kwargs["hint"]

    def get_redirect(self, url):
        return url


class Launch(LTIAdvantageMessageLaunchAbstract):
    def render_launch_form(self, launch_data, **kwargs):
        with LOCK:
            STATE["last_launch"] = launch_data
        return launch_form(launch_data)


def launch_form(data):
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8><title>Launching</title></head><body>"
        f'<form method=post action="{html.escape(data["launch_url"])}" id=form>'
        f'<input type=hidden name=id_token value="{html.escape(data["id_token"])}">'
        f'<input type=hidden name=state value="{html.escape(data["state"])}"></form>'
        "<script>document.getElementById('form').submit()</script></body></html>"
    )


class Gradebook(AssignmentsGradesService):
    def find_lineitems(self, page=1, limit=None, **kwargs):
        return {"content": [self.find_lineitem(LINEITEM_ID)], "has_next": False, "next": None}

    def find_lineitem(self, line_item_id):
        with LOCK:
            item = STATE["lineitems"].get(line_item_id, {"scoreMaximum": 100, "label": "Quiz"})
        return {"id": f"{BASE}/lineitems/{line_item_id}", **item}

    def create_lineitem(self, lineitem):
        return lineitem

    def update_lineitem(self, line_item_id, lineitem):
        return lineitem

    def delete_lineitem(self, line_item_id):
        return None

    def update_score(self, line_item_id, score):
        with LOCK:
            STATE["scores"].append({"lineitem": line_item_id, **score})
        return UpdateScoreStatus.SUCCESS

    def get_results(self, line_item_id, page=1, limit=None, user_id=None):
        with LOCK:
            scores = [s for s in STATE["scores"] if s["lineitem"] == line_item_id]
        results = [
            {"userId": s["userId"], "resultScore": s.get("scoreGiven"), "resultMaximum": s.get("scoreMaximum")}
            for s in scores
        ]
        return {"content": results, "has_next": False, "next": None}


BASE = ""
TOOL = ""


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def send(self, status, body, content_type="application/json", headers=()):
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def request_of(self, form=None, body=None):
        url = urlparse(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        return PlainRequest(
            {
                "method": self.command,
                "form_data": form or {},
                "get_data": query,
                # Case-insensitive, as the frameworks' adapters give it (HTTP header names are).
                "headers": self.headers,
                "content_type": self.headers.get("Content-Type"),
                "path": url.path,
                "json": body,
            }
        )

    def do_GET(self):
        url = urlparse(self.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        if url.path == "/jwks":
            return self.send(200, json.dumps(Platform(base=BASE, tool=TOOL).get_jwks()))
        if url.path == "/launch":
            hint = json.dumps(
                {
                    "user": query.get("user", "learner-1"),
                    "name": query.get("name", "Ada Lovelace"),
                    "target": query.get("target", ""),
                    "tamper": query.get("tamper", ""),
                    "locale": query.get("locale", ""),
                    "link": query.get("link", ""),
                    "client": query.get("client", ""),
                }
            )
            platform = Platform(base=BASE, tool=TOOL, client=query.get("client") or None)
            login = Login(self.request_of(), platform)
            login.set_lti_message_hint(hint=hint)
            target = query.get("target", "")
            if query.get("link"):
                with LOCK:
                    target = urlparse(STATE["links"][int(query["link"])]["url"]).query
            if target:
                login.set_launch_url(f"{TOOL}/lti/launch?{target}")
            location = login.initiate_login(query.get("user", "learner-1"))
            if query.get("storage"):
                # Client-side postMessage storage (not in lti1p3platform): the course page keeps
                # the tool's state.
                location += "&" + urlencode({"lti_storage_target": "_parent"})
            return self.send(302, "", headers=[("Location", location)])
        if url.path == "/authorize":
            hint = json.loads(query.get("lti_message_hint", "{}"))
            tamper = hint.get("tamper", "")
            platform = Platform(
                base=BASE,
                tool=TOOL,
                private_key=OTHER_PRIVATE if tamper == "other-key" else None,
                client=hint.get("client") or None,
            )
            launch = Launch(self.request_of(), platform)
            launch._registration = platform.get_registration()
            teacher = bool(hint.get("deep_link"))
            link, lineitem = None, LINEITEM_ID
            if hint.get("link"):
                with LOCK:
                    link = STATE["links"][int(hint["link"])]
                # Like Moodle, every activity has a gradebook item: its own, or the course's.
                lineitem = link.get("lineitem") or LINEITEM_ID
                hint["target"] = urlparse(link["url"]).query
            if hint.get("target"):
                launch.set_launch_url(f"{TOOL}/lti/launch?{hint['target']}")
            launch.set_user_data(
                hint.get("user", "learner-1"),
                [
                    "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"
                    if teacher
                    else "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
                ],
                full_name=hint.get("name") or None,
            )
            if teacher:
                launch.set_dl(
                    f"{BASE}/deep-link-return",
                    title="Add an activity",
                    accept_types={"ltiResourceLink"},
                    extra_data=DEEP_LINK_DATA,
                )
            elif link:
                launch.set_resource_link_claim(f"link-{hint['link']}", title=link["title"])
                if link.get("custom"):
                    launch.set_extra_claims({"https://purl.imsglobal.org/spec/lti/claim/custom": link["custom"]})
            else:
                launch.set_resource_link_claim("resource-link-1", title="Gradient accumulation quiz")
            launch.set_launch_context_claim("course-1", context_title="Fine-tuning on one GPU")
            if not teacher:
                launch.set_ags(f"{BASE}/lineitems", f"{BASE}/lineitems/{lineitem}")
            launch.set_extra_claims(
                {"https://purl.imsglobal.org/spec/lti/claim/tool_platform": {"name": "lti1p3platform test LMS", "guid": "test-lms"}}
            )
            if hint.get("locale"):
                launch.set_extra_claims(
                    {"https://purl.imsglobal.org/spec/lti/claim/launch_presentation": {"locale": hint["locale"], "document_target": "iframe"}}
                )
            if tamper == "expired":
                launch.set_id_token_expiration(-600)
            if tamper == "wrong-audience":
                launch.set_extra_claims({"aud": "another-tool", "azp": "another-tool"})
            if tamper == "unknown-deployment":
                launch.set_extra_claims({"https://purl.imsglobal.org/spec/lti/claim/deployment_id": "deployment-unknown"})
            try:
                page = launch.lti_launch()
            except Exception as error:  # the package refused the tool's authentication request
                return self.send(400, f"refused: {error!r}", "text/plain")
            return self.send(200, page, "text/html; charset=utf-8")
        if url.path == "/deep-link":
            # A teacher adds an activity: the tool picker, launched as a Deep Linking request.
            hint = json.dumps(
                {
                    "user": query.get("user", "teacher-1"),
                    "name": query.get("name", "Grace Teacher"),
                    "locale": query.get("locale", ""),
                    "deep_link": True,
                }
            )
            login = Login(self.request_of(), Platform(base=BASE, tool=TOOL))
            login.set_lti_message_hint(hint=hint)
            login.set_launch_url(f"{TOOL}/lti/launch")
            return self.send(302, "", headers=[("Location", login.initiate_login(query.get("user", "teacher-1")))])
        if url.path == "/.well-known/openid-configuration":
            return self.send(
                200,
                json.dumps(
                    {
                        "issuer": BASE,
                        "authorization_endpoint": f"{BASE}/authorize",
                        "token_endpoint": f"{BASE}/token",
                        "jwks_uri": f"{BASE}/jwks",
                        "registration_endpoint": f"{BASE}/register",
                        "scopes_supported": ["openid", "https://purl.imsglobal.org/spec/lti-ags/scope/score"],
                        "response_types_supported": ["id_token"],
                        "id_token_signing_alg_values_supported": ["RS256"],
                        "claims_supported": ["sub", "iss", "name", "given_name", "family_name"],
                        "https://purl.imsglobal.org/spec/lti-platform-configuration": {
                            "product_family_code": "lti1p3platform-test",
                            "version": "0.1.8",
                            "messages_supported": [{"type": "LtiResourceLinkRequest"}, {"type": "LtiDeepLinkingRequest"}],
                        },
                    }
                ),
            )
        if url.path == "/dynamic-registration":
            token = f"registration-token-{len(STATE['registration_tokens'])}"
            with LOCK:
                STATE["registration_tokens"].add(token)
            tool_url = query.get("tool", "")
            joiner = "&" if "?" in tool_url else "?"
            frame = tool_url + joiner + urlencode({"openid_configuration": f"{BASE}/.well-known/openid-configuration", "registration_token": token})
            page = (
                "<!doctype html><html lang=en><head><meta charset=utf-8><title>Register a tool</title></head><body><main>"
                "<h1>Register an LTI tool</h1><p id=status data-closed=false>Waiting for the tool…</p>"
                f'<iframe title="Tool registration" src="{html.escape(frame)}" width="900" height="500"></iframe>'
                "<script>window.addEventListener('message',(e)=>{if(e.data&&e.data.subject==='org.imsglobal.lti.close'){"
                "const s=document.getElementById('status');s.dataset.closed='true';s.textContent='The tool closed its registration.'}})</script>"
                "</main></body></html>"
            )
            return self.send(200, page, "text/html; charset=utf-8")
        if url.path == "/registrations.json":
            with LOCK:
                return self.send(200, json.dumps(STATE["registrations"]))
        if url.path == "/links.json":
            with LOCK:
                return self.send(200, json.dumps({"links": STATE["links"], "lineitems": STATE["lineitems"]}))
        if url.path == "/course":
            # The course page: the activity in an iframe, as Moodle and Canvas embed a tool.
            frame = html.escape("/replay" if query.get("replay") else "/launch?" + url.query)
            page = (
                "<!doctype html><html lang=en data-put=0 data-get=0><head><meta charset=utf-8><title>Course</title>"
                # LTI client-side postMessage storage, as the specification describes the
                # platform's side: values kept per origin and key, for this page's lifetime.
                "<script>const kept=new Map();window.addEventListener('message',(e)=>{const d=e.data||{};"
                "const k=e.origin+' '+d.key;if(d.subject==='lti.put_data'){kept.set(k,d.value);"
                "document.documentElement.dataset.put=Number(document.documentElement.dataset.put)+1;"
                "e.source.postMessage({subject:'lti.put_data.response',message_id:d.message_id,key:d.key,value:d.value},e.origin)}"
                "else if(d.subject==='lti.get_data'){document.documentElement.dataset.get=Number(document.documentElement.dataset.get)+1;"
                "const r={subject:'lti.get_data.response',message_id:d.message_id,key:d.key};"
                "if(kept.has(k))r.value=kept.get(k);else r.error={code:'bad_request',message:'no value for this key'};"
                "e.source.postMessage(r,e.origin)}})</script>"
                "</head><body>"
                "<main><h1>Fine-tuning on one GPU</h1>"
                f'<iframe title="Gradient Accumulation Lab" src="{frame}" width="960" height="1400"></iframe>'
                "</main>"
                "</body></html>"
            )
            return self.send(200, page, "text/html; charset=utf-8")
        if url.path == "/replay":
            with LOCK:
                last = STATE["last_launch"]
            if not last:
                return self.send(404, "no launch yet", "text/plain")
            return self.send(200, launch_form(last), "text/html; charset=utf-8")
        if url.path.startswith("/lineitems/") and url.path.endswith("/results"):
            line_item = url.path.split("/")[2]
            service = Gradebook(self.request_of(), Platform(base=BASE, tool=TOOL), f"{BASE}/lineitems", f"{BASE}/lineitems/{line_item}")
            response = service.handle_resp(service.handle_get_results, line_item_id=line_item)
            return self.send(response.code, json.dumps(response.result), response.media_type)
        if url.path == "/gradebook.json":
            with LOCK:
                return self.send(200, json.dumps(STATE["scores"]))
        return self.send(404, "not found", "text/plain")

    def do_POST(self):
        url = urlparse(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length).decode()
        if url.path == "/token":
            form = {k: v[0] for k, v in parse_qs(raw).items()}
            try:
                token = Platform(base=BASE, tool=TOOL).get_access_token(form)
            except Exception as error:
                return self.send(400, json.dumps({"error": "invalid_client", "error_description": repr(error)}))
            return self.send(200, json.dumps(token))
        if url.path == "/register":
            # LTI Dynamic Registration §3.5: the tool's registration, checked member by member.
            token = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
            with LOCK:
                known = token in STATE["registration_tokens"]
                STATE["registration_tokens"].discard(token)
            if not known:
                return self.send(401, json.dumps({"error": "invalid_token"}))
            try:
                request = json.loads(raw)
                tool = request[TOOL_CONFIGURATION]
                problems = [
                    name
                    for name, ok in [
                        ("content-type", self.headers.get("Content-Type", "").startswith("application/json")),
                        ("application_type", request.get("application_type") == "web"),
                        ("response_types", request.get("response_types") == ["id_token"]),
                        ("grant_types", {"implicit", "client_credentials"} <= set(request.get("grant_types", []))),
                        ("initiate_login_uri", request.get("initiate_login_uri", "").startswith(TOOL)),
                        ("redirect_uris", bool(request.get("redirect_uris")) and all(u.startswith(TOOL) for u in request["redirect_uris"])),
                        ("jwks_uri", request.get("jwks_uri", "").startswith(TOOL)),
                        ("token_endpoint_auth_method", request.get("token_endpoint_auth_method") == "private_key_jwt"),
                        ("client_name", bool(request.get("client_name"))),
                        ("domain", bool(tool.get("domain")) and tool["domain"] == urlparse(TOOL).hostname),
                        ("target_link_uri", tool.get("target_link_uri", "").startswith(TOOL)),
                        ("messages", all(m.get("type") in ("LtiResourceLinkRequest", "LtiDeepLinkingRequest") for m in tool.get("messages", []))),
                        ("scope", set(request.get("scope", "").split()) <= {"https://purl.imsglobal.org/spec/lti-ags/scope/score"}),
                    ]
                    if not ok
                ]
            except (ValueError, KeyError, TypeError, AttributeError) as error:
                return self.send(400, json.dumps({"error": "invalid_client_metadata", "error_description": repr(error)}))
            if problems:
                return self.send(400, json.dumps({"error": "invalid_client_metadata", "error_description": f"wrong: {problems}"}))
            with LOCK:
                n = len(STATE["registrations"]) + 1
                registration = {
                    "client_id": f"dynamic-{n}",
                    "deployment_id": f"dynamic-deployment-{n}",
                    "initiate_login_uri": request["initiate_login_uri"],
                    "redirect_uris": request["redirect_uris"],
                    "jwks_uri": request["jwks_uri"],
                    "messages": tool.get("messages", []),
                }
                STATE["registrations"].append(registration)
            answer = dict(request)
            answer["client_id"] = registration["client_id"]
            answer[TOOL_CONFIGURATION] = {**tool, "deployment_id": registration["deployment_id"]}
            return self.send(200, json.dumps(answer))
        if url.path == "/deep-link-return":
            form = {k: v[0] for k, v in parse_qs(raw).items()}
            try:
                platform = Platform(base=BASE, tool=TOOL)
                items = platform.validate_deeplinking_resp({"JWT": form.get("JWT", "")})
                # What the package leaves to its user (it does not check the audience): the
                # response is from this tool's client, to this platform, for this deployment,
                # with the request's data back unchanged.
                claims = json.loads(platform.urlsafe_b64decode(form["JWT"].split(".")[1]))
                problems = [
                    name
                    for name, ok in [
                        ("iss", claims.get("iss") == CLIENT_ID),
                        ("aud", claims.get("aud") in (BASE, [BASE])),
                        ("deployment_id", claims.get("https://purl.imsglobal.org/spec/lti/claim/deployment_id") == DEPLOYMENT_ID),
                        ("data", claims.get("https://purl.imsglobal.org/spec/lti-dl/claim/data") == DEEP_LINK_DATA),
                        ("nonce", bool(claims.get("nonce"))),
                        ("url", all(i.get("url", "").startswith(f"{TOOL}/lti/launch") for i in items)),
                    ]
                    if not ok
                ]
                if problems:
                    raise ValueError(f"claims wrong: {problems}")
            except Exception as error:
                return self.send(400, f"<!doctype html><html lang=en><head><title>Refused</title></head><body><main><h1>Refused</h1><p id=refused>{html.escape(repr(error))}</p></main></body></html>", "text/html; charset=utf-8")
            added = []
            with LOCK:
                for item in items:
                    link = {"title": item.get("title", ""), "url": item["url"], "custom": item.get("custom")}
                    if item.get("lineItem"):
                        lineitem = f"dl-{len(STATE['links'])}"
                        STATE["lineitems"][lineitem] = {
                            "scoreMaximum": item["lineItem"]["scoreMaximum"],
                            "label": item["lineItem"].get("label", ""),
                            "resourceId": item["lineItem"].get("resourceId", ""),
                        }
                        link["lineitem"] = lineitem
                    STATE["links"].append(link)
                    added.append((len(STATE["links"]) - 1, link))
            rows = "".join(
                f'<li><a href="/launch?link={k}" data-link="{k}">{html.escape(link["title"])}</a></li>' for k, link in added
            )
            page = (
                "<!doctype html><html lang=en><head><meta charset=utf-8><title>Course</title></head><body><main>"
                f'<h1>Fine-tuning on one GPU</h1><p id=added data-count="{len(added)}">Added {len(added)} activities.</p>'
                f"<ul>{rows}</ul></main></body></html>"
            )
            return self.send(200, page, "text/html; charset=utf-8")
        if url.path.startswith("/lineitems/") and url.path.endswith("/scores"):
            line_item = url.path.split("/")[2]
            if self.headers.get("Content-Type") != "application/vnd.ims.lis.v1.score+json":
                return self.send(415, "scores must be application/vnd.ims.lis.v1.score+json", "text/plain")
            try:
                body = json.loads(raw)
            except ValueError:
                return self.send(400, "not JSON", "text/plain")
            service = Gradebook(self.request_of(body=body), Platform(base=BASE, tool=TOOL), f"{BASE}/lineitems", f"{BASE}/lineitems/{line_item}")
            try:
                response = service.handle_resp(service.handle_update_score, line_item_id=line_item)
            except Exception as error:
                return self.send(401, repr(error), "text/plain")
            return self.send(response.code, json.dumps({"status": response.message}))
        return self.send(404, "not found", "text/plain")


def main():
    global BASE, TOOL
    port, TOOL = int(sys.argv[1]), sys.argv[2].rstrip("/")
    # 127.0.0.5, not the tool's 127.0.0.1: another site, as a real platform and tool are. (Not
    # "localhost": a browser may try ::1 first, where another test's server could answer.)
    server = ThreadingHTTPServer(("127.0.0.5", port), Handler)
    BASE = f"http://127.0.0.5:{server.server_address[1]}"
    print(
        json.dumps(
            {
                "issuer": BASE,
                "client_id": CLIENT_ID,
                "deployment_id": DEPLOYMENT_ID,
                "auth_login_url": f"{BASE}/authorize",
                "auth_token_url": f"{BASE}/token",
                "keyset_url": f"{BASE}/jwks",
            }
        ),
        flush=True,
    )
    server.serve_forever()


if __name__ == "__main__":
    main()
