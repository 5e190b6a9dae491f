import type Docker from "dockerode";

/** A swarm task as `docker.listTasks` returns it (the fields the platform reads). */
export interface SwarmTask {
  ID: string;
  ServiceID?: string;
  NodeID?: string;
  CreatedAt?: string;
  Status?: {
    State?: string;
    Err?: string;
    Message?: string;
    Timestamp?: string;
    ContainerStatus?: { ContainerID?: string; ExitCode?: number };
  };
  DesiredState?: string;
  Spec?: { ContainerSpec?: { Image?: string } };
}

/** Task states during which the node is creating or starting the task's container. */
export const SETTLING_STATES = new Set(["assigned", "accepted", "preparing", "ready", "starting"]);

/** Task states after which a task never runs again. */
export const FINAL_STATES = new Set([
  "complete",
  "failed",
  "rejected",
  "shutdown",
  "orphaned",
  "remove",
]);

/** The newest of `tasks` (by creation), or undefined when there is none. */
export function latestTask(tasks: SwarmTask[]): SwarmTask | undefined {
  return [...tasks].sort((a, b) => String(b.CreatedAt).localeCompare(String(a.CreatedAt)))[0];
}

/** Every task swarm still remembers of a service (its history included); none once it is gone. */
export async function serviceTasks(docker: Docker, serviceId: string): Promise<SwarmTask[]> {
  return (await docker
    .listTasks({ filters: { service: [serviceId] } })
    .catch(() => [])) as SwarmTask[];
}
