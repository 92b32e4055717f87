/*
 * runtime_check's event and callback sections (part of runtime_check, see
 * runtime_check.c): events within and across streams, and callbacks on a
 * subscribed thread.
 */
#include "runtime_check.h"

void check_events(void) {
  aclrtStream a = NULL, b = NULL;
  aclrtEvent e1 = NULL, e2 = NULL, e3 = NULL;
  OK(aclrtCreateStream(&a));
  OK(aclrtCreateStream(&b));
  OK(aclrtCreateEvent(&e1));
  OK(aclrtCreateEventWithFlag(&e2, ACL_EVENT_TIME_LINE | ACL_EVENT_SYNC));
  FAILS(aclrtCreateEventWithFlag(&e3, 0x40000000u), ACL_ERROR_INVALID_PARAM,
        "aclrtCreateEventWithFlag");
  FAILS(aclrtCreateEvent(NULL), ACL_ERROR_INVALID_PARAM, "aclrtCreateEvent");

  /* Never recorded: recorded-status NOT_READY, event-status COMPLETE, sync returns. */
  aclrtEventRecordedStatus rs = ACL_EVENT_RECORDED_STATUS_COMPLETE;
  aclrtEventStatus es = ACL_EVENT_STATUS_RESERVED;
  OK(aclrtQueryEventStatus(e1, &rs));
  CHECK(rs == ACL_EVENT_RECORDED_STATUS_NOT_READY);
  OK(aclrtQueryEvent(e1, &es));
  CHECK(es == ACL_EVENT_STATUS_COMPLETE);
  OK(aclrtSynchronizeEvent(e1));
  float ms = -1;
  FAILS(aclrtEventElapsedTime(&ms, e1, e2), ACL_ERROR_INVALID_PARAM, "aclrtEventElapsedTime");

  /* Pending record, then completed record (note the opposite numbering). */
  OK(aclrtLaunchHostFunc(a, host_sleep, (void *)(intptr_t)100));
  OK(aclrtRecordEvent(e1, a));
  OK(aclrtQueryEventStatus(e1, &rs));
  CHECK(rs == ACL_EVENT_RECORDED_STATUS_NOT_READY);
  OK(aclrtQueryEvent(e1, &es));
  CHECK(es == ACL_EVENT_STATUS_NOT_READY);
  FAILS(aclrtSynchronizeEventWithTimeout(e1, 10), ACL_ERROR_RT_EVENT_SYNC_TIMEOUT,
        "aclrtSynchronizeEventWithTimeout");
  FAILS(aclrtSynchronizeEventWithTimeout(e1, 0), ACL_ERROR_RT_EVENT_SYNC_TIMEOUT,
        "aclrtSynchronizeEventWithTimeout");
  OK(aclrtSynchronizeEventWithTimeout(e1, -1));
  OK(aclrtQueryEventStatus(e1, &rs));
  CHECK(rs == ACL_EVENT_RECORDED_STATUS_COMPLETE && ACL_EVENT_RECORDED_STATUS_COMPLETE == 1);
  OK(aclrtQueryEvent(e1, &es));
  CHECK(es == ACL_EVENT_STATUS_COMPLETE && ACL_EVENT_STATUS_COMPLETE == 0);

  /* On an idle stream a record completes in the call itself (no worker
   * wake-up: Python records one after every collective it enqueues). */
  OK(aclrtSynchronizeStream(a));
  OK(aclrtRecordEvent(e1, a));
  OK(aclrtQueryEventStatus(e1, &rs));
  CHECK(rs == ACL_EVENT_RECORDED_STATUS_COMPLETE);

  /* Elapsed time between two records around a 30 ms host function. */
  OK(aclrtRecordEvent(e1, a));
  OK(aclrtLaunchHostFunc(a, host_sleep, (void *)(intptr_t)30));
  OK(aclrtRecordEvent(e2, a));
  OK(aclrtSynchronizeEvent(e2));
  OK(aclrtEventElapsedTime(&ms, e1, e2));
  CHECK(ms >= 25.0f && ms < 5000.0f);
  FAILS(aclrtEventElapsedTime(NULL, e1, e2), ACL_ERROR_INVALID_PARAM, "aclrtEventElapsedTime");

  /* Reset: no longer recorded. */
  OK(aclrtResetEvent(e2, a));
  OK(aclrtSynchronizeStream(a));
  OK(aclrtQueryEventStatus(e2, &rs));
  CHECK(rs == ACL_EVENT_RECORDED_STATUS_NOT_READY);
  FAILS(aclrtEventElapsedTime(&ms, e1, e2), ACL_ERROR_INVALID_PARAM, "endEvent");

  /* Cross-stream order: B waits for A's record after A's 50 ms host func. */
  Flag f = {0, -1};
  OK(aclrtLaunchHostFunc(a, host_sleep_then_set, &f));
  OK(aclrtRecordEvent(e1, a));
  OK(aclrtStreamWaitEvent(b, e1));
  OK(aclrtLaunchHostFunc(b, host_observe, &f));
  OK(aclrtSynchronizeStream(b));
  CHECK(f.observed == 1);

  /* The same through memory: A writes after a delay, B copies it out. */
  unsigned char *buf = NULL, out[256];
  OK(aclrtMalloc((void **)&buf, 256, ACL_MEM_MALLOC_HUGE_FIRST));
  OK(aclrtMemset(buf, 256, 0, 256));
  OK(aclrtLaunchHostFunc(a, host_sleep, (void *)(intptr_t)50));
  OK(aclrtMemsetAsync(buf, 256, 7, 256, a));
  OK(aclrtRecordEvent(e1, a));
  OK(aclrtStreamWaitEvent(b, e1));
  OK(aclrtMemcpyAsync(out, sizeof out, buf, 256, ACL_MEMCPY_DEVICE_TO_HOST, b));
  OK(aclrtSynchronizeStream(b));
  for (int i = 0; i < 256; ++i) CHECK(out[i] == 7);

  /* A wait binds to the most recent record as of the call, not later ones. */
  OK(aclrtSynchronizeStream(a));
  OK(aclrtStreamWaitEvent(b, e1)); /* e1's record is complete */
  OK(aclrtLaunchHostFunc(a, host_sleep, (void *)(intptr_t)500));
  OK(aclrtRecordEvent(e1, a));
  OK(aclrtSynchronizeStream(b));
  aclrtStreamStatus st;
  OK(aclrtStreamQuery(a, &st)); /* B did not wait for the later record */
  CHECK(st == ACL_STREAM_STATUS_NOT_READY);
  OK(aclrtSynchronizeStream(a));

  /* A wait on an earlier record is not released by a later record of the
   * same event on another stream that completes first. */
  Flag g = {0, -1};
  OK(aclrtLaunchHostFunc(a, host_sleep_then_set, &g));
  OK(aclrtRecordEvent(e1, a));    /* completes after 50 ms */
  OK(aclrtStreamWaitEvent(b, e1)); /* binds to that record */
  aclrtStream c = NULL;
  OK(aclrtCreateStream(&c));
  OK(aclrtRecordEvent(e1, c));    /* a later record, done at once */
  OK(aclrtSynchronizeStream(c));
  OK(aclrtLaunchHostFunc(b, host_observe, &g));
  OK(aclrtSynchronizeStream(b));
  CHECK(g.observed == 1);
  /* The same for aclrtSynchronizeEvent on a record that a later one overtakes:
   * it waits for the latest record as of the call, here the one on c. */
  OK(aclrtSynchronizeStream(a));

  /* Whoever sees an event complete also sees its stream past the record
   * (aclrtStreamQuery), and the other way round. Racy before the fix: many
   * of 2000 queries said NOT_READY. */
  int ran = 0, not_ready = 0, ev_not_done = 0;
  for (int i = 0; i < 2000; ++i) {
    OK(aclrtLaunchHostFunc(c, host_count, &ran));
    OK(aclrtRecordEvent(e1, c));
    OK(aclrtSynchronizeEvent(e1));
    OK(aclrtStreamQuery(c, &st));
    not_ready += st != ACL_STREAM_STATUS_COMPLETE;
    OK(aclrtRecordEvent(e1, c));
    OK(aclrtSynchronizeStream(c));
    OK(aclrtQueryEventStatus(e1, &rs));
    ev_not_done += rs != ACL_EVENT_RECORDED_STATUS_COMPLETE;
  }
  CHECK(not_ready == 0 && ev_not_done == 0 && ran == 2000);
  OK(aclrtDestroyStream(c));

  /* Default stream for record and wait. */
  OK(aclrtRecordEvent(e1, NULL));
  OK(aclrtStreamWaitEvent(NULL, e1));
  OK(aclrtSynchronizeStream(NULL));

  /* Bad handles. */
  FAILS(aclrtRecordEvent(NULL, a), ACL_ERROR_INVALID_PARAM, "aclrtRecordEvent");
  FAILS(aclrtRecordEvent(a, a), ACL_ERROR_RT_INVALID_HANDLE, "aclrtRecordEvent"); /* stream as event */
  FAILS(aclrtRecordEvent(e1, e2), ACL_ERROR_RT_INVALID_HANDLE, "aclrtRecordEvent"); /* event as stream */
  FAILS(aclrtQueryEventStatus(e1, NULL), ACL_ERROR_INVALID_PARAM, "aclrtQueryEventStatus");
  OK(aclrtDestroyEvent(e2));
  FAILS(aclrtDestroyEvent(e2), ACL_ERROR_RT_INVALID_HANDLE, "aclrtDestroyEvent");
  FAILS(aclrtSynchronizeEvent(e2), ACL_ERROR_RT_INVALID_HANDLE, "aclrtSynchronizeEvent");
  FAILS(aclrtStreamWaitEvent(b, e2), ACL_ERROR_RT_INVALID_HANDLE, "aclrtStreamWaitEvent");
  FAILS(aclrtQueryEvent((aclrtEvent)(uintptr_t)0x4242, &es), ACL_ERROR_RT_INVALID_HANDLE,
        "aclrtQueryEvent");

  /* Destroying an event a stream still waits on is safe. */
  OK(aclrtLaunchHostFunc(a, host_sleep, (void *)(intptr_t)20));
  OK(aclrtRecordEvent(e1, a));
  OK(aclrtStreamWaitEvent(b, e1));
  OK(aclrtDestroyEvent(e1));
  OK(aclrtSynchronizeStream(b));

  OK(aclrtFree(buf));
  OK(aclrtDestroyStream(a));
  OK(aclrtDestroyStream(b));
}

/* ---- callbacks on a subscribed thread ---------------------------------- */

typedef struct {
  volatile int stop;
  int ran;
  pthread_t ran_on;
} Reporter;

static void *report_loop(void *arg) {
  Reporter *r = (Reporter *)arg;
  while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
    aclError e = aclrtProcessReport(20);
    CHECK(e == ACL_SUCCESS || e == ACL_ERROR_WAIT_CALLBACK_TIMEOUT ||
          e == ACL_ERROR_THREAD_NOT_SUBSCRIBE);
  }
  return NULL;
}

static void on_callback(void *arg) {
  Reporter *r = (Reporter *)arg;
  r->ran_on = pthread_self();
  __atomic_add_fetch(&r->ran, 1, __ATOMIC_RELEASE); /* publishes ran_on */
}

void check_callbacks(void) {
  aclrtStream s = NULL;
  OK(aclrtCreateStream(&s));
  Reporter r;
  memset(&r, 0, sizeof r);
  FAILS(aclrtLaunchCallback(on_callback, &r, ACL_CALLBACK_BLOCK, s),
        ACL_ERROR_STREAM_NOT_SUBSCRIBE, "aclrtLaunchCallback");
  FAILS(aclrtProcessReport(10), ACL_ERROR_THREAD_NOT_SUBSCRIBE, "aclrtProcessReport");

  pthread_t t;
  CHECK(pthread_create(&t, NULL, report_loop, &r) == 0);
  OK(aclrtSubscribeReport((uint64_t)t, s));
  FAILS(aclrtSubscribeReport((uint64_t)t, s), ACL_ERROR_REPEAT_SUBSCRIBE, "aclrtSubscribeReport");
  OK(aclrtLaunchCallback(on_callback, &r, ACL_CALLBACK_BLOCK, s));
  OK(aclrtLaunchCallback(on_callback, &r, ACL_CALLBACK_NO_BLOCK, s));
  FAILS(aclrtLaunchCallback(on_callback, &r, (aclrtCallbackBlockType)5, s),
        ACL_ERROR_INVALID_PARAM, "blockType");
  OK(aclrtSynchronizeStream(s));
  /* The blocking one ran before the stream went on; wait for the other. */
  for (int i = 0; i < 500 && __atomic_load_n(&r.ran, __ATOMIC_ACQUIRE) < 2; ++i) sleep_ms(2);
  CHECK(__atomic_load_n(&r.ran, __ATOMIC_ACQUIRE) == 2);
  CHECK(pthread_equal(r.ran_on, t));
  FAILS(aclrtUnSubscribeReport((uint64_t)t + 1, s), ACL_ERROR_STREAM_NOT_SUBSCRIBE,
        "aclrtUnSubscribeReport");
  OK(aclrtUnSubscribeReport((uint64_t)t, s));
  __atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
  CHECK(pthread_join(t, NULL) == 0);
  OK(aclrtDestroyStream(s));
}
