"""Removing what executors left in the engine: containers and networks of attempts that are over."""

import contextlib
import logging
import os
import shutil
import socket
import time
from pathlib import Path

from hemra.services.environments.engine import (
    INSTANCE,
    LABEL_ATTEMPT,
    LABEL_HOST,
    LABEL_INSTANCE,
    LABEL_OWNER,
    LABEL_PID,
    LABEL_STARTED,
    client,
    container_labels,
    docker_errors,
    owner,
)
from hemra.services.executor import processes
from hemra.services.executor.sandboxes import docker_configured

logger = logging.getLogger(__name__)


def process_labels() -> dict[str, str]:
    """This executor process's labels (engine.container_labels), with its start time."""
    return container_labels(processes.start_time(os.getpid()))


def remove_orphans(alive=None) -> list[str]:
    """Remove the containers of this executor's earlier instances: those labelled with its
    owner (engine.owner: HEMRA_EXECUTOR_ID, else the host's name) whose process no longer runs.
    Another owner's containers are never touched, however they look: several executors may
    share one engine. Quietly nothing when no engine is configured or reachable. Returns the
    removed IDs."""
    if not docker_configured():
        return []
    alive = alive or processes.alive
    try:
        api = client().api
        found = api.containers(all=True, filters={"label": [f"{LABEL_OWNER}={owner()}"]})
        # Those an executor started before containers named their owner: this host's.
        found += [
            container
            for container in api.containers(all=True, filters={"label": [f"{LABEL_HOST}={socket.gethostname()}"]})
            if LABEL_OWNER not in container["Labels"]
        ]
    except Exception as exc:  # no engine, or it went away: nothing of ours can be running there
        logger.debug("no orphan containers checked: %s", exc)
        return []
    removed = []
    for container in found:
        pid = container["Labels"].get(LABEL_PID, "")
        if not pid.isdigit():
            continue
        if int(pid) == os.getpid() and container["Labels"].get(LABEL_INSTANCE) == INSTANCE:
            continue  # this process's own
        if int(pid) != os.getpid() and alive(int(pid), container["Labels"].get(LABEL_STARTED, "")):
            continue
        removed += _remove_now(api, container["Id"], "orphan container")
    return removed + _remove_networks(api, {"label": [f"{LABEL_OWNER}={owner()}"]}, alive)


def _remove_networks(api, filters: dict, alive=None) -> list[str]:
    """Remove the attempts' networks (verifier.network = "bridge") these labels select, of
    processes that no longer run (all of them when `alive` is None: this process's own)."""
    try:
        found = api.networks(filters=filters)
    except Exception as exc:  # the engine went away
        logger.debug("no networks checked: %s", exc)
        return []
    removed = []
    for network in found:
        labels = network.get("Labels") or {}
        pid = labels.get(LABEL_PID, "")
        if LABEL_ATTEMPT not in labels or not pid.isdigit():
            continue
        if alive is not None:
            if int(pid) == os.getpid() and labels.get(LABEL_INSTANCE) == INSTANCE:
                continue
            if int(pid) != os.getpid() and alive(int(pid), labels.get(LABEL_STARTED, "")):
                continue
        if _remove_network(api, network["Id"]):
            removed.append(network["Id"])
    return removed


def remove_own() -> list[str]:
    """Remove every container this process made that is still there, once its attempts are
    over (an executor on its way out): each attempt's teardown removes its own, so any found
    here is logged. Returns the removed IDs."""
    try:
        api = client().api
        found = api.containers(all=True, filters={"label": [f"{LABEL_INSTANCE}={INSTANCE}"]})
    except Exception as exc:  # no engine, or it went away
        logger.debug("own containers not checked: %s", exc)
        return []
    removed = [gone for container in found for gone in _remove_now(api, container["Id"], "container left")]
    if found:
        logger.warning("%d container(s) of finished attempts were left; removed %d", len(found), len(removed))
    return removed + _remove_networks(api, {"label": [f"{LABEL_INSTANCE}={INSTANCE}"]})


def _remove_now(api, container_id: str, what: str) -> list[str]:
    """[container_id] once removed (with its anonymous volumes), [] when it was not."""
    try:
        api.remove_container(container_id, force=True, v=True)
        return [container_id]
    except docker_errors().NotFound:
        return []
    except docker_errors().APIError as exc:
        logger.warning("could not remove %s %s: %s", what, container_id[:12], exc)
        return []


#: Tries at removing a container: the engine refuses a removal that races its own handling
#: of the container's death (a kill through the cgroup it has not seen yet) with a conflict.
REMOVE_TRIES = (0.0, 0.2, 1.0, 3.0)


def remove(container_id: str, folder: Path | None, network_id: str = "") -> None:
    try:
        for pause in REMOVE_TRIES if container_id else ():
            time.sleep(pause)
            try:
                client().api.remove_container(container_id, force=True, v=True)
                break
            except docker_errors().NotFound:
                break
            except docker_errors().APIError as exc:
                logger.warning("could not remove container %s (will try again): %s", container_id[:12], exc)
    finally:
        try:
            if network_id:
                _remove_network(client().api, network_id)
        finally:
            if folder is not None:
                shutil.rmtree(folder, ignore_errors=True)


def _remove_network(api, network_id: str) -> bool:
    """Remove an attempt's network, and first any container still on it: only that attempt's
    containers ever join it, and the attempt is over (its verifier's may still be on its way
    out in another thread). True once it is gone."""
    failure = None
    for pause in REMOVE_TRIES:
        time.sleep(pause)
        try:
            for container_id in api.inspect_network(network_id).get("Containers") or {}:
                with contextlib.suppress(docker_errors().APIError):  # being removed already: tried again
                    api.remove_container(container_id, force=True, v=True)
            api.remove_network(network_id)
            return True
        except docker_errors().NotFound:
            return True
        except docker_errors().APIError as exc:  # a container still leaving it: tried again
            failure = exc
    logger.warning("could not remove network %s: %s", network_id[:12], failure)
    return False
