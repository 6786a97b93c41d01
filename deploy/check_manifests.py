#!/usr/bin/env python3
"""Static checks of Cloudy's deployment files (run by scripts/check-deploy).

Parses deploy/compose.yaml, every Kubernetes YAML, the Grafana provisioning and dashboard,
the Dockerfile, the systemd unit and the Prometheus rules, and asserts that they agree with
each other and with the exporter: ports, probes, mounts, and above all metric names (a typo in
a dashboard or alert expression would silently show or fire nothing). The metric names are
those of the golden pages (Tests/CloudyTests/Fixtures/golden/*.prom), which the Swift tests
compare with the exporter's real output. Only files in this repository are read.

Prints one line per check ("ok   …" or "FAIL …: reason") and exits 1 if any failed.
Needs python3 and PyYAML; with promtool on PATH it also parses every dashboard query.
"""
import glob
import importlib.machinery
import importlib.util
import itertools
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

import yaml

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Tests", "Support"))
from cloudy_harness import REPO_ROOT, exposition  # noqa: E402

ROOT = str(REPO_ROOT)
DEPLOY = os.path.join(ROOT, "deploy")
GRAFANA = os.path.join(ROOT, "grafana")
PORT = 10150
# deploy/kubernetes/generate, the one source of the PrometheusRule and the dashboard ConfigMap.
GENERATE = importlib.util.module_from_spec(importlib.util.spec_from_loader(
    "generate", importlib.machinery.SourceFileLoader("generate", os.path.join(DEPLOY, "kubernetes", "generate"))))
GENERATE.__loader__.exec_module(GENERATE)

# ---- metric names ---------------------------------------------------------------------------
# The live process_* part of /metrics is not on the golden pages (its values change); these are
# the standard names of Prometheus' process collector.
PROCESS_METRICS = {"process_cpu_seconds_total", "process_resident_memory_bytes", "process_virtual_memory_bytes",
                   "process_open_fds", "process_max_fds", "process_start_time_seconds"}
# Series Prometheus itself writes for every scrape target.
PROMETHEUS_SYNTHETIC = {"up"}


def exporter_names():
    """Every metric name the exporter serves: the golden pages' families and samples, process_*."""
    return exposition.golden_metric_names() | PROCESS_METRICS


# ---- PromQL: which metric names does an expression read? -----------------------------------
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and", "or", "unless",
            "offset", "atan2", "inf", "nan", "start", "end"}


def metric_names(expr):
    e = re.sub(r'"(?:\\.|[^"\\])*"|\'(?:\\.|[^\'\\])*\'|`[^`]*`', '""', expr)   # strings
    e = re.sub(r"#.*", "", e)                                                        # comments
    e = re.sub(r"\{[^}]*\}", "", e)                                                  # label matchers
    e = re.sub(r"\[[^\]]*\]", "", e)                                                 # ranges, subqueries
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", e)  # label lists
    names = set()
    for m in re.finditer(r"(?<![\w.:$])([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?", e):
        word, call = m.group(1), m.group(2)
        if call or word.lower() in KEYWORDS:
            continue
        names.add(word)
    return names


def grafana_expansions(expr, variables):
    """The expression once per combination of the unit variables' options."""
    used = [v for v in variables if re.search(r"\$\{?%s\b" % re.escape(v), expr)]
    for combo in itertools.product(*(variables[v] for v in used)):
        e = expr
        for name, value in zip(used, combo):
            e = re.sub(r"\$\{%s(:[a-z]+)?\}|\$%s\b" % (name, name), value, e)
        yield e


# ---- the checker --------------------------------------------------------------------------
class Checker:
    def __init__(self):
        self.failed = 0
        self.passed = 0

    def check(self, name, fn):
        try:
            problems = fn() or []
        except Exception as exc:  # a file that does not parse is a failed check, not a crash
            problems = ["%s: %s" % (type(exc).__name__, exc)]
        if problems:
            self.failed += 1
            print("FAIL %s: %s" % (name, "; ".join(problems)))
        else:
            self.passed += 1
            print("ok   %s" % name)


def load_yaml_docs(path):
    with open(path, encoding="utf-8") as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def rel(path):
    return os.path.relpath(path, ROOT)


def recording_rules():
    names = set()
    for path in glob.glob(os.path.join(DEPLOY, "prometheus", "rules", "*.yml")):
        for group in load_yaml_docs(path)[0]["groups"]:
            names.update(r["record"] for r in group["rules"] if "record" in r)
    return names


def allowed_names():
    return exporter_names() | recording_rules() | PROMETHEUS_SYNTHETIC


def inside_repo(path):
    """True when `path` (absolute) is in this repository."""
    return os.path.realpath(path).startswith(os.path.realpath(ROOT) + os.sep)


def flag_value(args, flag):
    for i, a in enumerate(args):
        if a.startswith(flag + "="):
            return a.split("=", 1)[1]
        if a == flag and i + 1 < len(args):
            return args[i + 1]
    return None


# ---- compose -------------------------------------------------------------------------------
def bind_mounts(service):
    """container path -> host path (absolute) of a service's bind mounts, wherever they point."""
    out = {}
    for v in service.get("volumes", []):
        if isinstance(v, dict):
            src, dst = v.get("source"), v.get("target")
        else:
            parts = v.split(":")
            src, dst = parts[0], parts[1]
        if src and (src.startswith(".") or src.startswith("/")):
            out[dst] = os.path.normpath(os.path.join(DEPLOY, src))
    return out


def compose_mounts(service):
    """The bind mounts whose host path is in this repository (the others are a failed check,
    and nothing outside the repository is looked at)."""
    return {dst: host for dst, host in bind_mounts(service).items() if inside_repo(host)}


def mounted_host_path(mounts, container_path):
    """Host path that a container path resolves to through the bind mounts (longest match)."""
    for dst in sorted(mounts, key=len, reverse=True):
        if container_path == dst:
            return mounts[dst]
        if container_path.startswith(dst.rstrip("/") + "/"):
            return os.path.normpath(os.path.join(mounts[dst], os.path.relpath(container_path, dst)))
    return None


def check_compose():
    problems = []
    compose = load_yaml_docs(os.path.join(DEPLOY, "compose.yaml"))[0]
    services = compose["services"]
    for name in ("cloudy", "prometheus", "alertmanager", "grafana"):
        if name not in services:
            problems.append("no service %s" % name)
    for name, s in services.items():
        if not s.get("image"):
            problems.append("service %s names no image" % name)
        for host in bind_mounts(s).values():
            if not inside_repo(host):
                problems.append("service %s mounts %s, outside the repository" % (name, host))
            elif not os.path.exists(host):
                problems.append("service %s mounts missing %s" % (name, rel(host)))
    published = {"cloudy": PORT, "prometheus": 9090, "alertmanager": 9093, "grafana": 3000}
    for name, port in published.items():
        ports = [str(p).split(":")[-1].split("/")[0] for p in services.get(name, {}).get("ports", [])]
        if str(port) not in ports:
            problems.append("service %s does not publish %d" % (name, port))
    cloudy = services.get("cloudy", {})
    if cloudy.get("build"):
        dockerfile = os.path.join(DEPLOY, cloudy["build"].get("context", "."), cloudy["build"].get("dockerfile", "Dockerfile"))
        if not os.path.exists(dockerfile):
            problems.append("cloudy build: no %s" % rel(dockerfile))
    args = cloudy.get("command", [])
    args = shlex.split(args) if isinstance(args, str) else args
    config = flag_value(args, "--config.file")
    host = config and mounted_host_path(compose_mounts(cloudy), config)
    if not config or not host or not os.path.isfile(host):
        problems.append("cloudy: --config.file %s is not a mounted file" % config)
    # Prometheus: its config and the rule files it names are mounted.
    prom = services.get("prometheus", {})
    pargs = prom.get("command", [])
    pconfig = flag_value(pargs, "--config.file") or "/etc/prometheus/prometheus.yml"
    pmounts = compose_mounts(prom)
    phost = mounted_host_path(pmounts, pconfig)
    if not phost or os.path.realpath(phost) != os.path.realpath(os.path.join(DEPLOY, "prometheus", "prometheus.yml")):
        problems.append("prometheus: %s is not deploy/prometheus/prometheus.yml" % pconfig)
    else:
        pcfg = load_yaml_docs(phost)[0]
        want = set(glob.glob(os.path.join(DEPLOY, "prometheus", "rules", "*.yml")))
        got = set()
        for pattern in pcfg.get("rule_files", []):
            inside = pattern if pattern.startswith("/") else os.path.join(os.path.dirname(pconfig), pattern)
            host_pattern = mounted_host_path(pmounts, inside)
            got.update(os.path.normpath(p) for p in (glob.glob(host_pattern) if host_pattern else []))
        if want - got:
            problems.append("prometheus does not load %s" % ", ".join(sorted(rel(p) for p in want - got)))
        targets = [t for sc in pcfg.get("scrape_configs", []) if sc.get("job_name") == "cloudy"
                   for st in sc.get("static_configs", []) for t in st.get("targets", [])]
        if "cloudy:%d" % PORT not in targets:
            problems.append("prometheus.yml: job cloudy does not scrape cloudy:%d" % PORT)
    am = services.get("alertmanager", {})
    amconfig = flag_value(am.get("command", []), "--config.file") or "/etc/alertmanager/alertmanager.yml"
    amhost = mounted_host_path(compose_mounts(am), amconfig)
    if not amhost or os.path.realpath(amhost) != os.path.realpath(os.path.join(DEPLOY, "alertmanager", "alertmanager.yml")):
        problems.append("alertmanager: %s is not deploy/alertmanager/alertmanager.yml" % amconfig)
    # Grafana: provisioning at /etc/grafana/provisioning, dashboards where the provider looks.
    gmounts = compose_mounts(services.get("grafana", {}))
    prov = mounted_host_path(gmounts, "/etc/grafana/provisioning")
    if not prov or os.path.realpath(prov) != os.path.realpath(os.path.join(GRAFANA, "provisioning")):
        problems.append("grafana: grafana/provisioning is not mounted at /etc/grafana/provisioning")
    for path in glob.glob(os.path.join(GRAFANA, "provisioning", "dashboards", "*.y*ml")):
        for provider in load_yaml_docs(path)[0].get("providers", []):
            inside = provider.get("options", {}).get("path")
            host = inside and mounted_host_path(gmounts, inside)
            if not host or not glob.glob(os.path.join(host, "*.json")):
                problems.append("grafana: provider %s path %s holds no mounted dashboard" % (provider.get("name"), inside))
    return problems


# ---- Kubernetes ----------------------------------------------------------------------------
KUBE = os.path.join(DEPLOY, "kubernetes")
# Each variant a user can apply, with the optional component added to each.
KUBE_VARIANTS = {"deploy/kubernetes": (KUBE, []), "deploy/kubernetes/sharded": (os.path.join(KUBE, "sharded"), [])}
KUBE_COMPONENTS = {"network-policy": os.path.join(KUBE, "components", "network-policy"),
                   "tls": os.path.join(KUBE, "components", "tls")}
# What components/tls tells users to put in the Secret cloudy-web-config (not rendered: no Secret is).
KUBE_WEB_CONFIG = os.path.join(KUBE, "components", "tls", "web-config.yml")


def kustomize(directory, components=()):
    """The objects `kubectl kustomize` renders for a directory, with components added through a
    throwaway kustomization that refers to them (kustomize takes relative paths only)."""
    kubectl = shutil.which("kubectl")
    if not kubectl:
        raise RuntimeError("kubectl not on PATH (scripts/install-deps --test)")
    with tempfile.TemporaryDirectory() as tmp:
        target = directory
        if components:
            with open(os.path.join(tmp, "kustomization.yaml"), "w", encoding="utf-8") as f:
                yaml.safe_dump({"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
                                "resources": [os.path.relpath(directory, tmp)],
                                "components": [os.path.relpath(c, tmp) for c in components]}, f)
            target = tmp
        run = subprocess.run([kubectl, "kustomize", target], capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError("kubectl kustomize %s: %s" % (rel(directory), run.stderr.strip()[:400]))
    return [d for d in yaml.safe_load_all(run.stdout) if d]


def kube_variants():
    """name -> rendered objects, for every variant alone and with each component."""
    out = {}
    for name, (directory, components) in KUBE_VARIANTS.items():
        out[name] = kustomize(directory, components)
        for cname, cdir in KUBE_COMPONENTS.items():
            out["%s + components/%s" % (name, cname)] = kustomize(directory, components + [cdir])
    return out


def check_pod_security(where, pod, cloudy):
    """The security settings every Cloudy pod must have, asserted, not only present."""
    problems = []
    pod_sc = pod["spec"].get("securityContext", {})
    sc = cloudy.get("securityContext", {})
    if not (sc.get("runAsNonRoot", pod_sc.get("runAsNonRoot")) is True
            and sc.get("runAsUser", pod_sc.get("runAsUser", 0)) not in (0, None)):
        problems.append("%s: not runAsNonRoot with a non-zero runAsUser" % where)
    if sc.get("readOnlyRootFilesystem") is not True:
        problems.append("%s: root filesystem not read-only" % where)
    if sc.get("allowPrivilegeEscalation") is not False:
        problems.append("%s: allowPrivilegeEscalation is not false" % where)
    if sc.get("capabilities", {}).get("drop") != ["ALL"] or sc.get("capabilities", {}).get("add"):
        problems.append("%s: capabilities are not drop [ALL] with none added" % where)
    seccomp = sc.get("seccompProfile", pod_sc.get("seccompProfile", {})).get("type")
    if seccomp != "RuntimeDefault":
        problems.append("%s: seccomp profile %s, want RuntimeDefault" % (where, seccomp))
    if pod["spec"].get("automountServiceAccountToken") is not False:
        problems.append("%s: mounts a service account token it does not need" % where)
    if pod["spec"].get("hostNetwork") or pod["spec"].get("hostPID"):
        problems.append("%s: uses the host network or PID namespace" % where)
    res = cloudy.get("resources", {})
    for kind, keys in (("requests", ("cpu", "memory")), ("limits", ("memory",))):
        for key in keys:
            if not res.get(kind, {}).get(key):
                problems.append("%s: no resources.%s.%s" % (where, kind, key))
    tls = flag_value(cloudy.get("args", []), "--web.config.file") is not None
    for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
        spec = cloudy.get(probe, {})
        get = spec.get("httpGet", {})
        command = " ".join(spec.get("exec", {}).get("command", []))
        if tls and probe == "readinessProbe" and "exec" in spec:
            # With a web config, /readyz asks for the login: curl in the pod sends it.
            if not re.search(r"curl .*-u .*https://127\.0\.0\.1:%d%s" % (PORT, path), command):
                problems.append("%s: %s does not curl https://127.0.0.1:%d%s with a login" % (where, probe, PORT, path))
        elif get.get("path") != path or get.get("port") not in ("http-metrics", PORT):
            problems.append("%s: %s is not GET %s on the container port" % (where, probe, path))
        elif tls and get.get("scheme") != "HTTPS":
            problems.append("%s: %s is not over HTTPS, with --web.config.file" % (where, probe))
        if not spec.get("periodSeconds") or not spec.get("timeoutSeconds") or not spec.get("failureThreshold"):
            problems.append("%s: %s lacks periodSeconds, timeoutSeconds or failureThreshold" % (where, probe))
    return problems


def check_kubernetes_variant(variant, objs):
    problems = []
    by_kind = {}
    for o in objs:
        by_kind.setdefault(o["kind"], []).append(o)
    configmaps = {o["metadata"]["name"]: o for o in by_kind.get("ConfigMap", [])}
    workloads = by_kind.get("Deployment", []) + by_kind.get("StatefulSet", [])
    if len(workloads) != 1:
        problems.append("%s: %d workloads, want one Deployment or StatefulSet" % (variant, len(workloads)))
    if by_kind.get("Secret"):
        problems.append("%s: applies a Secret, which would overwrite a real API key" % variant)
    for w in workloads:
        where = "%s: %s %s" % (variant, w["kind"], w["metadata"]["name"])
        pod = w["spec"]["template"]
        if w["spec"]["selector"]["matchLabels"].items() - pod["metadata"]["labels"].items():
            problems.append("%s: selector does not match the pod labels" % where)
        volumes = {v["name"]: v for v in pod["spec"].get("volumes", [])}
        containers = pod["spec"]["containers"]
        cloudy = next((c for c in containers if c["name"] == "cloudy"), None)
        if cloudy is None:
            problems.append("%s: no cloudy container" % where)
            continue
        problems += check_pod_security(where, pod, cloudy)
        ports = {p.get("name"): p["containerPort"] for p in cloudy.get("ports", [])}
        if ports.get("http-metrics") != PORT:
            problems.append("%s: no container port http-metrics = %d" % (where, PORT))
        args = cloudy.get("args", [])
        config_path = flag_value(args, "--config.file")
        mounts = cloudy.get("volumeMounts", [])

        def volume_file(path):
            """(volume, key) that serves a file path through the container's mounts."""
            for m in mounts:
                mp = m["mountPath"].rstrip("/")
                if m.get("subPath") and path == mp:
                    return volumes.get(m["name"]), m["subPath"]
                if not m.get("subPath") and path.startswith(mp + "/"):
                    return volumes.get(m["name"]), path[len(mp) + 1:]
            return None, None

        vol, key = volume_file(config_path or "")
        cm = vol and vol.get("configMap") and configmaps.get(vol["configMap"]["name"])
        if not cm or key not in cm.get("data", {}):
            problems.append("%s: --config.file %s is not a key of a ConfigMap mounted there" % (where, config_path))
            continue
        if not re.fullmatch(r"cloudy-config-[a-z0-9]{10}", cm["metadata"]["name"]):
            problems.append("%s: config ConfigMap %s has no content hash: an edit would not roll the pods"
                            % (where, cm["metadata"]["name"]))
        if any(m.get("subPath") and volumes.get(m["name"], {}).get("configMap") for m in mounts):
            problems.append("%s: the config is mounted with subPath" % where)
        for v in volumes.values():
            if v.get("secret") and v["secret"].get("optional") is not True:
                problems.append("%s: Secret %s is not optional: pods would wait for it" % (where, v["secret"].get("secretName")))
        cfg = yaml.safe_load(cm["data"][key])
        key_file = (cfg.get("provider") or {}).get("api_key_file")
        if key_file:
            vol, _ = volume_file(key_file)
            if not (vol and vol.get("secret")):
                problems.append("%s: api_key_file %s is not in a mounted Secret" % (where, key_file))
        web_path = flag_value(args, "--web.config.file")
        if web_path:
            problems += check_kube_web_config(where, web_path, volume_file, cloudy, by_kind.get("ServiceMonitor", []))
        if w["kind"] == "StatefulSet":
            env = {e["name"]: e for e in cloudy.get("env", [])}
            field = env.get("POD_INDEX", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath", "")
            if flag_value(args, "--shard") != "$(POD_INDEX)/$(SHARD_COUNT)":
                problems.append("%s: --shard is not $(POD_INDEX)/$(SHARD_COUNT)" % where)
            if env.get("SHARD_COUNT", {}).get("value") != str(w["spec"]["replicas"]):
                problems.append("%s: SHARD_COUNT %s is not replicas %s" % (
                    where, env.get("SHARD_COUNT", {}).get("value"), w["spec"]["replicas"]))
            if "apps.kubernetes.io/pod-index" not in field:
                problems.append("%s: POD_INDEX is not the pod-index label" % where)
            pdbs = [b for b in by_kind.get("PodDisruptionBudget", [])
                    if b["spec"]["selector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()]
            if not pdbs or pdbs[0]["spec"].get("maxUnavailable") != 1:
                problems.append("%s: no PodDisruptionBudget with maxUnavailable 1 for the shards" % where)
    services = by_kind.get("Service", [])
    if not services:
        problems.append("%s: no Service" % variant)
    for s in services:
        sel = s["spec"].get("selector", {})
        if not any(sel.items() <= w["spec"]["template"]["metadata"]["labels"].items() for w in workloads):
            problems.append("%s: Service %s selects no pod" % (variant, s["metadata"]["name"]))
        if not any(p.get("port") == PORT and p.get("targetPort") in ("http-metrics", PORT) and p.get("name") == "http-metrics"
                   for p in s["spec"].get("ports", [])):
            problems.append("%s: Service %s: no port http-metrics %d" % (variant, s["metadata"]["name"], PORT))
    for sm in by_kind.get("ServiceMonitor", []) or [None]:
        if sm is None:
            problems.append("%s: no ServiceMonitor" % variant)
            break
        sel = sm["spec"]["selector"].get("matchLabels", {})
        matched = [s for s in services if sel.items() <= s["metadata"].get("labels", {}).items()]
        if not matched:
            problems.append("%s: ServiceMonitor selects no Service" % variant)
        for ep in sm["spec"].get("endpoints", []):
            if not all(any(p.get("name") == ep.get("port") for p in s["spec"]["ports"]) for s in matched):
                problems.append("%s: ServiceMonitor endpoint port %s is not a Service port" % (variant, ep.get("port")))
        job_label = sm["spec"].get("jobLabel")
        jobs = {s["metadata"]["labels"].get(job_label) if job_label else s["metadata"]["name"] for s in matched}
        if jobs - {"cloudy"}:
            problems.append("%s: ServiceMonitor gives job=%s, cloudy:up selects job=cloudy" % (variant, sorted(jobs)))
    # The rules and the dashboard, as the Operator and the Grafana sidecar get them.
    # deploy/kubernetes/generate writes both from their sources; what it writes now is the reference.
    rules = [r for r in by_kind.get("PrometheusRule", []) if r["apiVersion"] == "monitoring.coreos.com/v1"]
    if len(rules) != 1 or rules[0]["spec"] != yaml.safe_load(GENERATE.prometheus_rule())["spec"]:
        problems.append("%s: no PrometheusRule equal to deploy/prometheus/rules/ (run deploy/kubernetes/generate)" % variant)
    boards = [c for c in configmaps.values() if c["metadata"].get("labels", {}).get("grafana_dashboard") == "1"]
    if len(boards) != 1 or boards[0].get("data") != yaml.safe_load(GENERATE.dashboard_config_map())["data"]:
        problems.append("%s: no ConfigMap grafana_dashboard=1 holding grafana/dashboards/cloudy.json" % variant)
    for np in by_kind.get("NetworkPolicy", []):
        spec = np["spec"]
        if not any(spec["podSelector"].get("matchLabels", {}).items() <= w["spec"]["template"]["metadata"]["labels"].items()
                   for w in workloads):
            problems.append("%s: NetworkPolicy %s selects no Cloudy pod" % (variant, np["metadata"]["name"]))
        peers = [peer for rule in spec.get("ingress", []) for peer in rule.get("from", [])]
        ports = [p.get("port") for rule in spec.get("ingress", []) for p in rule.get("ports", [])]
        if (spec.get("policyTypes") != ["Ingress"] or not peers or ports != ["http-metrics"]
                or any(peer.get("namespaceSelector", {}).get("matchLabels") != {"kubernetes.io/metadata.name": "monitoring"}
                       or "podSelector" in peer or "ipBlock" in peer for peer in peers)):
            problems.append("%s: NetworkPolicy %s admits more than the monitoring namespace on http-metrics"
                            % (variant, np["metadata"]["name"]))
    if "components/network-policy" in variant and not by_kind.get("NetworkPolicy"):
        problems.append("%s: no NetworkPolicy" % variant)
    return problems


def check_kube_web_config(where, web_path, volume_file, cloudy, monitors):
    """components/tls: the web config, its certificate and the probe's password are files of
    mounted Secrets; /healthz is open for the liveness probe; the ServiceMonitor scrapes over
    https with tlsConfig and, as the web config asks for a login, basicAuth."""
    problems = []
    vol, _ = volume_file(web_path)
    if not (vol and vol.get("secret")):
        problems.append("%s: --web.config.file %s is not in a mounted Secret" % (where, web_path))
    with open(KUBE_WEB_CONFIG, encoding="utf-8") as f:
        web = yaml.safe_load(f)
    for key in ("cert_file", "key_file"):
        path = (web.get("tls_server_config") or {}).get(key, "")
        vol, _ = volume_file(path)
        if not (vol and vol.get("secret")):
            problems.append("%s: %s tls_server_config.%s %s is not in a mounted Secret" % (where, rel(KUBE_WEB_CONFIG), key, path))
    if cloudy.get("livenessProbe", {}).get("httpGet") and "/healthz" not in (web.get("auth_excluded_paths") or []):
        problems.append("%s: the liveness probe cannot log in, and %s does not open /healthz" % (where, rel(KUBE_WEB_CONFIG)))
    command = " ".join(cloudy.get("readinessProbe", {}).get("exec", {}).get("command", []))
    for password_file in re.findall(r"\$\(cat ([^)]+)\)", command):
        vol, _ = volume_file(password_file)
        if not (vol and vol.get("secret")):
            problems.append("%s: the readiness probe's password %s is not in a mounted Secret" % (where, password_file))
    for user in re.findall(r'-u "(\w+):', command):
        if user not in (web.get("basic_auth_users") or {}):
            problems.append("%s: the readiness probe logs in as %s, not a user of %s" % (where, user, rel(KUBE_WEB_CONFIG)))
    for sm in monitors:
        for ep in sm["spec"].get("endpoints", []):
            if ep.get("scheme") != "https" or not ep.get("tlsConfig", {}).get("ca"):
                problems.append("%s: ServiceMonitor endpoint is not https with tlsConfig.ca" % where)
            auth = ep.get("basicAuth", {})
            if web.get("basic_auth_users") and not (auth.get("username", {}).get("key") and auth.get("password", {}).get("key")):
                problems.append("%s: ServiceMonitor endpoint sends no basicAuth from a Secret" % where)
    return problems


def check_kubernetes():
    problems = []
    for variant, objs in kube_variants().items():
        problems += check_kubernetes_variant(variant, objs)
    return problems


# ---- Grafana -------------------------------------------------------------------------------
def dashboards():
    return sorted(glob.glob(os.path.join(GRAFANA, "dashboards", "*.json")))


# Placeholder values of the dashboard's query variables, for parsing and name checks.
VARIABLE_EXAMPLES = {"job": "cloudy", "instance": "cloudy:10150", "place": "Berlin"}
DASHBOARD_VARIABLES = ("datasource", "job", "instance", "place")
# The Grafana unit of each unit family in a metric name.
GRAFANA_UNITS = {"celsius": "celsius", "fahrenheit": "fahrenheit", "meters_per_second": "velocityms",
                 "kilometers_per_hour": "velocitykmh", "miles_per_hour": "velocitymph", "knots": "velocityknot"}
# The threshold series (weather_alert_threshold_celsius, _meters_per_second) are in base units and
# converted in the expression to the family they are drawn beside, which is the one that counts.
UNIT_FAMILY = re.compile(r"\b(weather_(?!alert_threshold_)\w+?)_(%s)\b" % "|".join(GRAFANA_UNITS))
# Concentrations: Cloudy's g/m³ shown in µg/m³ (Grafana's id has the Greek mu), so the query
# must multiply by 10⁶; pollen counts in grains/m³, which Grafana has no unit for.
MICROGRAMS_PER_CUBIC_METER = "con\u03bcgm3"
GRAMS_FAMILY = re.compile(r"\bweather_\w+_grams_per_cubic_meter\b")
TIMES_MILLION = re.compile(r"\*\s*(1e6|1000000)\b")
GRAINS_FAMILY = re.compile(r"\bweather_\w+_grains_per_cubic_meter(_max)?\b")
GRAINS_UNIT = "suffix: grains/m³"


def dashboard_variables(dash):
    """name -> option values of the custom variables; query variables get a placeholder."""
    out = {}
    for v in dash.get("templating", {}).get("list", []):
        if v.get("type") == "custom":
            out[v["name"]] = [o["value"] for o in v.get("options", [])] or v["query"].split(",")
        elif v.get("type") != "datasource":
            out[v["name"]] = [VARIABLE_EXAMPLES.get(v["name"], "x")]
    return out


def dashboard_panels(dash):
    """Every panel but the rows themselves, those inside a (collapsed) row included."""
    for p in dash["panels"]:
        for sub in [p] + p.get("panels", []):
            if sub.get("type") != "row":
                yield sub


def dashboard_exprs(dash):
    for p in dashboard_panels(dash):
        for t in p.get("targets", []):
            yield p, t.get("expr", "")


def variable_query(var):
    q = var.get("query")
    return q.get("query") if isinstance(q, dict) else q


def target_units(panel):
    """refId -> the Grafana unit its values are shown in: the panel's default unit, or an override
    by frame refId (stat, time series), or by the table column "Value #refId"."""
    default = panel.get("fieldConfig", {}).get("defaults", {}).get("unit")
    units = {t.get("refId"): default for t in panel.get("targets", [])}
    for o in panel.get("fieldConfig", {}).get("overrides", []):
        matcher = o.get("matcher", {})
        ref = None
        if matcher.get("id") == "byFrameRefID":
            ref = matcher.get("options")
        elif matcher.get("id") == "byName" and str(matcher.get("options", "")).startswith("Value #"):
            ref = matcher["options"][len("Value #"):]
        for prop in o.get("properties", []):
            if ref in units and prop.get("id") == "unit":
                units[ref] = prop.get("value")
    return units


def check_grafana():
    problems = []
    uids = set()
    for path in glob.glob(os.path.join(GRAFANA, "provisioning", "datasources", "*.y*ml")):
        for ds in load_yaml_docs(path)[0].get("datasources", []):
            if ds.get("type") == "prometheus":
                uids.add(ds.get("uid"))
            if ds.get("isDefault"):
                problems.append("%s: datasource %s claims to be the default" % (rel(path), ds.get("name")))
    if not uids:
        problems.append("no provisioned Prometheus datasource")
    if not dashboards():
        problems.append("no dashboard JSON in grafana/dashboards")
    builtin = {"__rate_interval", "__range", "__interval"}
    for path in dashboards():
        dash = json.load(open(path, encoding="utf-8"))
        name = os.path.basename(path)
        if not dash.get("uid"):
            problems.append("%s: no stable uid" % name)
        inputs = [i for i in dash.get("__inputs", []) if i.get("type") == "datasource" and i.get("pluginId") == "prometheus"]
        if not inputs:
            problems.append("%s: no __inputs entry for a Prometheus datasource (import through the UI)" % name)
        required = {(r.get("type"), r.get("id")) for r in dash.get("__requires", [])}
        panel_types = {("panel", p.get("type")) for p in dashboard_panels(dash)}
        for need in {("grafana", "grafana"), ("datasource", "prometheus")} | panel_types:
            if need not in required:
                problems.append("%s: __requires lacks %s %s" % (name, need[0], need[1]))
        variables = {v["name"]: v for v in dash.get("templating", {}).get("list", [])}
        if list(variables) != list(DASHBOARD_VARIABLES):
            problems.append("%s: variables %s, want %s" % (name, list(variables), list(DASHBOARD_VARIABLES)))
        ds_var = variables.get("datasource", {})
        if ds_var.get("type") != "datasource" or ds_var.get("query") != "prometheus":
            problems.append("%s: variable datasource is not a datasource variable of type prometheus" % name)
        want_queries = {
            "job": "label_values(cloudy_exporter_build_info, job)",
            "instance": 'label_values(cloudy_exporter_build_info{job="$job"}, instance)',
            "place": 'label_values(weather_location_info{job="$job", instance=~"$instance"}, location)',
        }
        for var, query in want_queries.items():
            if variable_query(variables.get(var, {})) != query:
                problems.append("%s: variable %s is not %s" % (name, var, query))
            elif (variables[var].get("datasource") or {}).get("uid") != "${datasource}":
                problems.append("%s: variable %s does not query ${datasource}" % (name, var))
        ids = [sub.get("id") for p in dash["panels"] for sub in [p] + p.get("panels", [])]
        if len(ids) != len(set(ids)):
            problems.append("%s: duplicate panel ids" % name)
        for p in dashboard_panels(dash):
            title = p.get("title", p.get("id"))
            if (p.get("datasource") or {}).get("uid") != "${datasource}":
                problems.append("%s: panel %r does not use the datasource variable" % (name, title))
            if p.get("type") == "timeseries" and (
                    (p.get("fieldConfig") or {}).get("defaults", {}).get("custom", {}).get("spanNulls") is not False):
                # A line drawn across a gap shows a down or stale place, or a dead exporter, as
                # if it had reported all along.
                problems.append("%s: time series panel %r does not leave gaps (spanNulls: false)" % (name, title))
            targets = [t for t in p.get("targets", []) if t.get("expr", "").strip()]
            if not targets:
                problems.append("%s: panel %r has no target with an expr" % (name, title))
            units = target_units(p)
            for t in p.get("targets", []):
                ref = t.get("refId")
                # A stat shows now: a range query reduced to its last value would show a series
                # the exporter withdrew (a stale place, a replaced pod) as current for the range.
                if p.get("type") == "stat" and (not t.get("instant") or t.get("range")):
                    problems.append("%s: stat panel %r target %s is not an instant query" % (name, title, ref))
                # Grafana's own escaping of a single value turns ' into \\' (no data for
                # "St. John's"); its regex format in a raw string matches the name exactly.
                if re.search(r"location\s*[=!]~?\s*\"\$\{?place", t.get("expr", "")):
                    problems.append("%s: panel %r target %s: select the place as location=~`${place:regex}`" % (
                        name, title, ref))
                if (t.get("datasource") or {}).get("uid") != "${datasource}":
                    problems.append("%s: panel %r target %s does not use the datasource variable" % (name, title, ref))
                if not units.get(ref):
                    problems.append("%s: panel %r target %s has no Grafana unit" % (name, title, ref))
                # The first unit family a target reads decides its values' unit.
                family = UNIT_FAMILY.search(t.get("expr", ""))
                if family and units.get(ref) != GRAFANA_UNITS[family.group(2)]:
                    problems.append("%s: panel %r target %s reads %s but shows unit %s, want %s" % (
                        name, title, ref, family.group(0), units.get(ref), GRAFANA_UNITS[family.group(2)]))
                grams = GRAMS_FAMILY.search(t.get("expr", ""))
                if grams and (units.get(ref) != MICROGRAMS_PER_CUBIC_METER or not TIMES_MILLION.search(t["expr"])):
                    problems.append("%s: panel %r target %s reads %s (g/m³): want it * 1e6 in unit %s, got unit %s" % (
                        name, title, ref, grams.group(0), MICROGRAMS_PER_CUBIC_METER, units.get(ref)))
                grains = GRAINS_FAMILY.search(t.get("expr", ""))
                if grains and units.get(ref) != GRAINS_UNIT:
                    problems.append("%s: panel %r target %s reads %s but shows unit %s, want %r" % (
                        name, title, ref, grains.group(0), units.get(ref), GRAINS_UNIT))
                # Every selector of an exporter series is narrowed to the chosen job and instance.
                for selector in re.finditer(r"\b((?:weather|cloudy_exporter)_\w+)(\{[^}]*\})?", t.get("expr", "")):
                    matchers = selector.group(2) or ""
                    if 'job="$job"' not in matchers or 'instance=~"$instance"' not in matchers:
                        problems.append("%s: panel %r target %s: %s without job=\"$job\", instance=~\"$instance\"" % (
                            name, title, ref, selector.group(1)))
        allowed = allowed_names()
        for p, expr in dashboard_exprs(dash):
            for var in re.findall(r"\$\{?(\w+)", expr):
                if var not in variables and var not in builtin:
                    problems.append("%s: panel %r uses unknown variable $%s" % (name, p.get("title"), var))
            for e in grafana_expansions(expr, dashboard_variables(dash)):
                for metric in metric_names(e) - allowed:
                    problems.append("%s: panel %r reads %s, not an exporter metric nor a recording rule" % (name, p.get("title"), metric))
    return sorted(set(problems))


def check_grafana_promql():
    """Every dashboard query, variables substituted, parses as PromQL (through promtool)."""
    promtool = shutil.which("promtool")
    if not promtool:
        return ["promtool not on PATH"]
    rules = []
    for path in dashboards():
        dash = json.load(open(path, encoding="utf-8"))
        variables = dashboard_variables(dash)
        for p, expr in dashboard_exprs(dash):
            for e in grafana_expansions(expr, variables):
                e = e.replace("$__rate_interval", "4m").replace("$__range", "1h").replace("$__interval", "1m")
                rules.append({"record": "dashboard:query_%d" % len(rules), "expr": e,
                              "labels": {"panel": str(p.get("title"))}})
    with tempfile.NamedTemporaryFile("w", suffix=".yml", delete=False) as f:
        yaml.safe_dump({"groups": [{"name": "dashboard", "rules": rules}]}, f)
    try:
        run = subprocess.run([promtool, "check", "rules", f.name], capture_output=True, text=True)
    finally:
        os.unlink(f.name)
    if run.returncode != 0:
        return [line.strip() for line in (run.stdout + run.stderr).splitlines() if line.strip() and "Checking" not in line][:10]
    return []


# ---- Prometheus rules ------------------------------------------------------------------------
def check_rule_metrics():
    problems = []
    allowed = allowed_names()
    for path in sorted(glob.glob(os.path.join(DEPLOY, "prometheus", "rules", "*.yml"))):
        for group in load_yaml_docs(path)[0]["groups"]:
            for r in group["rules"]:
                for metric in metric_names(str(r["expr"])) - allowed:
                    problems.append("%s %s reads %s" % (os.path.basename(path), r.get("alert") or r.get("record"), metric))
                if "alert" in r:
                    ann = r.get("annotations", {})
                    if not r.get("labels", {}).get("severity"):
                        problems.append("%s: no severity" % r["alert"])
                    if not ann.get("summary") or not ann.get("description") or "$value" not in ann.get("description", ""):
                        problems.append("%s: needs summary and a description with $value" % r["alert"])
    # Weather alerts name the place.
    for path in glob.glob(os.path.join(DEPLOY, "prometheus", "rules", "cloudy-weather.rules.yml")):
        for group in load_yaml_docs(path)[0]["groups"]:
            for r in group["rules"]:
                if "alert" in r and "$labels.location" not in r["annotations"]["summary"] + r["annotations"]["description"]:
                    problems.append("%s does not name the place" % r["alert"])
    return problems


def check_golden_names():
    """The golden pages give every family the dashboard and rules may read, in every unit."""
    pages = exposition.golden_pages()
    if not pages:
        return ["no golden page %s/*.prom" % rel(str(exposition.GOLDEN_PAGES))]
    names = exposition.golden_metric_names()
    problems = []
    for family in ("weather_up", "weather_location_info", "cloudy_exporter_build_info",
                   "cloudy_exporter_refresh_duration_seconds_bucket", "weather_temperature_fahrenheit",
                   "weather_wind_speed_knots", "weather_forecast_daily_temperature_min_celsius"):
        if family not in names:
            problems.append("%s is on no golden page" % family)
    return problems


# ---- Dockerfile and systemd unit -------------------------------------------------------------
def read_joined(*path):
    """A file under deploy/ with its backslash-continued lines joined into one."""
    text = open(os.path.join(DEPLOY, *path), encoding="utf-8").read()
    return re.sub(r"\\\n\s*", " ", text)


def check_dockerfile():
    problems = []
    text = read_joined("docker", "Dockerfile")
    lines = [l.strip() for l in text.splitlines() if l.strip() and not l.strip().startswith("#")]
    froms = [l for l in lines if l.upper().startswith("FROM ")]
    if len(froms) < 2 or not froms[0].split()[1].startswith("swift:6.3-bookworm") or froms[-1].split()[1] != "debian:bookworm-slim":
        problems.append("not a swift:6.3-bookworm build stage and a debian:bookworm-slim runtime: %s" % froms)
    runtime = lines[lines.index(froms[-1]):] if froms else []
    build = lines[:lines.index(froms[-1])] if froms else []
    btext, rtext = " ".join(build), " ".join(runtime)
    if "libcurl4-openssl-dev" not in btext:
        problems.append("build stage lacks libcurl4-openssl-dev")
    # The release build as shipped (static Swift runtime, link layout) is scripts/build-release.
    script = os.path.join(DEPLOY, "..", "scripts", "build-release")
    # What scripts/build-release reads besides the package: its link layout.
    needed = ("scripts/build-release", "scripts/release-link")
    if not re.search(r"RUN .*scripts/build-release", btext):
        problems.append("build stage does not run scripts/build-release")
    elif any(not re.search(r"COPY \S*%s" % re.escape(path), btext) for path in needed):
        problems.append("build stage does not copy %s" % " and ".join(needed))
    elif "--static-swift-stdlib" not in open(script, encoding="utf-8").read():
        problems.append("scripts/build-release does not build with --static-swift-stdlib")
    for pkg in ("libcurl4", "ca-certificates"):
        if not re.search(r"apt-get install[^&]*\b%s\b" % pkg, rtext):
            problems.append("runtime stage does not install %s" % pkg)
    users = [l.split()[1] for l in runtime if l.upper().startswith("USER ")]
    if not users or users[-1].split(":")[0] in ("root", "0"):
        problems.append("runtime does not run as a non-root USER")
    if not any(l.upper().startswith("EXPOSE ") and str(PORT) in l for l in runtime):
        problems.append("no EXPOSE %d" % PORT)
    health = [l for l in runtime if l.upper().startswith("HEALTHCHECK ")]
    if not health or "/healthz" not in health[0]:
        problems.append("no HEALTHCHECK on /healthz")
    elif "curl" in health[0] and not re.search(r"apt-get install[^&]*\bcurl\b", rtext):
        problems.append("HEALTHCHECK uses curl, which the runtime stage does not install")
    labels = dict(re.findall(r'(org\.opencontainers\.image\.[a-z.]+)="([^"]*)"', " ".join(
        l for l in runtime if l.upper().startswith("LABEL "))))
    for key in ("title", "description", "url", "source", "version", "revision", "created"):
        if not labels.get("org.opencontainers.image." + key):
            problems.append("runtime stage has no LABEL org.opencontainers.image.%s" % key)
    version = re.search(r'version = "([^"]+)"', open(os.path.join(ROOT, "Sources", "Cloudy", "Telemetry",
                                                                   "BuildInfo.swift"), encoding="utf-8").read())
    if version and not re.search(r"ARG VERSION=%s\b" % re.escape(version.group(1)), rtext):
        problems.append("ARG VERSION is not BuildInfo.version %s" % version.group(1))
    ignore_file = os.path.join(DEPLOY, "docker", "Dockerfile.dockerignore")
    if not os.path.exists(ignore_file):
        problems.append("no deploy/docker/Dockerfile.dockerignore")
    else:
        ignore = open(ignore_file, encoding="utf-8").read().split()
        for path in needed:
            if "*" in ignore and "!" + path not in ignore:
                problems.append("Dockerfile.dockerignore leaves %s out of the build context" % path)
    return problems


def check_systemd_unit():
    problems = []
    text = read_joined("systemd", "cloudy_exporter.service")
    settings = {}
    for line in text.splitlines():
        if "=" in line and not line.lstrip().startswith(("#", ";", "[")):
            k, v = line.split("=", 1)
            settings.setdefault(k.strip(), []).append(v.strip())
    want = {"DynamicUser": "yes", "ProtectSystem": "strict", "ProtectHome": "yes", "NoNewPrivileges": "yes",
            "PrivateTmp": "yes", "PrivateDevices": "yes", "ProtectKernelTunables": "yes",
            "ProtectKernelModules": "yes", "ProtectKernelLogs": "yes", "ProtectControlGroups": "yes",
            "RestrictAddressFamilies": "AF_INET AF_INET6 AF_UNIX", "RestrictNamespaces": "yes",
            "LockPersonality": "yes", "MemoryDenyWriteExecute": "yes", "CapabilityBoundingSet": "",
            "StateDirectory": "cloudy_exporter", "ExecReload": "/bin/kill -HUP $MAINPID",
            "EnvironmentFile": "-/etc/default/cloudy_exporter"}
    for k, v in want.items():
        if v not in settings.get(k, []):
            problems.append("%s=%s missing" % (k, v))
    if "@system-service" not in settings.get("SystemCallFilter", []):
        problems.append("SystemCallFilter=@system-service missing")
    exec_start = (settings.get("ExecStart") or [""])[0].split()
    if not exec_start or exec_start[0] != "/usr/local/bin/cloudy_exporter":
        problems.append("ExecStart is not /usr/local/bin/cloudy_exporter")
    for flag in ("--config.file=/etc/cloudy_exporter/cloudy.yml", "--storage.path=/var/lib/cloudy_exporter", "$ARGS"):
        if flag not in exec_start:
            problems.append("ExecStart lacks %s" % flag)
    env = open(os.path.join(DEPLOY, "systemd", "cloudy_exporter.env"), encoding="utf-8").read()
    keys = [l.split("=", 1)[0] for l in env.splitlines() if l.strip() and not l.startswith("#")]
    if "ARGS" not in keys:
        problems.append("cloudy_exporter.env sets no ARGS")
    if any(not re.fullmatch(r"[A-Z_][A-Z0-9_]*", k) for k in keys):
        problems.append("cloudy_exporter.env has a line that is not KEY=value")
    if "CLOUDY_API_KEY" in env:
        problems.append("cloudy_exporter.env suggests the API key as an environment variable")
    dropin = os.path.join(DEPLOY, "systemd", "cloudy_exporter.service.d", "api-key.conf")
    credentials = [l.split("=", 1)[1].strip() for l in open(dropin, encoding="utf-8").read().splitlines()
                   if l.startswith("LoadCredential=")] if os.path.exists(dropin) else []
    if credentials != ["api-key:/etc/cloudy_exporter/api-key"]:
        problems.append("cloudy_exporter.service.d/api-key.conf does not LoadCredential=api-key:/etc/cloudy_exporter/api-key")
    if "LoadCredential=" in "".join(l for l in text.splitlines() if not l.startswith("#")):
        problems.append("the unit itself loads a credential: it would not start without a key file")
    config = open(os.path.join(DEPLOY, "config", "cloudy.yml"), encoding="utf-8").read()
    if "/run/credentials/cloudy_exporter.service/api-key" not in config:
        problems.append("config/cloudy.yml does not show api_key_file at the credential's path")
    return problems


def main():
    c = Checker()
    c.check("compose.yaml: images, port %d, config, Prometheus rules, Alertmanager, Grafana mounts" % PORT, check_compose)
    c.check("kubernetes (kubectl kustomize of every variant): security settings, probes, resources, hashed config, "
            "no Secret, shards from replicas, PDB, NetworkPolicy, TLS component, Service, ServiceMonitor, PrometheusRule, "
            "dashboard",
            check_kubernetes)
    c.check("grafana: datasources, targets, variables, metric names the exporter serves", check_grafana)
    c.check("grafana: every query parses as PromQL (promtool)", check_grafana_promql)
    c.check("rules: metric names the exporter serves, severity, summary and description", check_rule_metrics)
    c.check("metric names: read from the golden pages, every unit family there", check_golden_names)
    c.check("Dockerfile: stages, packages, non-root user, EXPOSE, HEALTHCHECK, OCI labels", check_dockerfile)
    c.check("systemd unit: hardening, paths, environment file, API key by LoadCredential=", check_systemd_unit)
    print("check_manifests: %d passed, %d failed" % (c.passed, c.failed))
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
