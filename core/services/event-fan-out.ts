import { KbError } from '../errors/kb-error.ts';
import { type Notification, notificationFromRecord } from '../events/notifications.ts';
import type { DeliveredMessage, MessageLogTail, Subscription } from '../ports/message-log/message-log.port.ts';

/** One reader of the shared tail: the notifications of its workspace, as they are read. */
export interface FanOutMember {
  readonly workspaceId: string;
  /** Called synchronously for each notification of the workspace; must not throw or wait. */
  deliver(notification: Notification, message: DeliveredMessage): void;
  /** Called once if the shared tail ends by itself (the log could not be read); the member is out. */
  end(error: unknown): void;
}

export interface NotificationFanOut {
  /**
   * Adds a member: from the moment this resolves, every notification of its workspace the shared
   * tail reads goes to it (the tail starts with the first member: only messages appended from then
   * on). Resolves to the function that removes it.
   */
  join(member: FanOutMember): Promise<() => void>;
  /** Stops the shared tail; later joins are refused. */
  close(): Promise<void>;
}

/**
 * One tail of the notification topic per process, shared by every member (each open event
 * stream): each message is decoded once and handed to the members of its workspace only, without
 * waiting for them (each member queues for its own client). The tail starts with the first member
 * and stops `lingerMs` after the last one left, so a process with no stream reads nothing and one
 * whose streams come and go does not start a tail for each (on Kafka a start joins a group).
 */
export function createNotificationFanOut(deps: {
  readonly logTail: MessageLogTail;
  readonly topic: string;
  readonly lingerMs: number;
}): NotificationFanOut {
  const byWorkspace = new Map<string, Set<FanOutMember>>();
  let members = 0;
  let tail: Subscription | null = null;
  let starting: Promise<void> | null = null;
  let linger: NodeJS.Timeout | undefined;
  let closed = false;
  /** Counts the tails started, so a tail stopped earlier that reports its end fails nobody now. */
  let generation = 0;

  const handler = async (message: DeliveredMessage): Promise<void> => {
    const group = byWorkspace.get(String(message.value.workspace_id));
    if (!group || group.size === 0) return;
    const notification = notificationFromRecord(message.value);
    for (const member of [...group]) member.deliver(notification, message);
  };

  /** The shared tail ended by itself: every member ends with it; the next join starts another. */
  const failed = (error: unknown) => {
    tail = null;
    const everyone: FanOutMember[] = [];
    for (const group of byWorkspace.values()) {
      everyone.push(...group);
      group.clear();
    }
    byWorkspace.clear();
    members = 0;
    for (const member of everyone) member.end(error);
  };

  const ensureTail = async (): Promise<void> => {
    clearTimeout(linger);
    if (tail) return;
    if (!starting) {
      const mine = ++generation;
      const onEnd = (error: unknown) => {
        if (mine === generation) failed(error);
      };
      starting = deps.logTail
        .tail({ topic: deps.topic, handler, onEnd })
        .then((started) => {
          tail = started;
        })
        .finally(() => {
          starting = null;
        });
    }
    await starting;
  };

  const stopWhenIdle = () => {
    clearTimeout(linger);
    linger = setTimeout(() => {
      if (members > 0 || !tail) return;
      const idle = tail;
      tail = null;
      generation++;
      void idle.stop().catch(() => undefined);
    }, deps.lingerMs);
    linger.unref();
  };

  return {
    async join(member) {
      if (closed) throw new KbError('service-unavailable', 'The service is shutting down.');
      await ensureTail();
      if (closed) throw new KbError('service-unavailable', 'The service is shutting down.');
      // The tail failed as soon as it started: no member would hear anything from it.
      if (!tail) throw new KbError('service-unavailable', 'The event log could not be read; try again.');
      let group = byWorkspace.get(member.workspaceId);
      if (!group) {
        group = new Set();
        byWorkspace.set(member.workspaceId, group);
      }
      group.add(member);
      members++;
      const joined = group;
      let left = false;
      return () => {
        if (left) return;
        left = true;
        // Gone already when the shared tail failed (the map was cleared).
        if (!joined.delete(member)) return;
        members--;
        if (joined.size === 0 && byWorkspace.get(member.workspaceId) === joined) byWorkspace.delete(member.workspaceId);
        if (members === 0) stopWhenIdle();
      };
    },
    async close() {
      closed = true;
      clearTimeout(linger);
      await starting?.catch(() => undefined);
      const last = tail;
      tail = null;
      await last?.stop().catch(() => undefined);
    },
  };
}
