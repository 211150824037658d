//! One task owns each session (issue 35): the session's behaviours under a client's inputs,
//! in process, under paused time, with a model that streams one delta per 10 ms.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use oi_core::Message;
use oi_session::{Input, InterruptMode, Step, TurnStart};
use serde_json::json;
use support::{
    Reply, command, has_word, input, is_complete, is_confirmation, is_error, is_marker, marker,
    next, quiet, rig, say, until, until_complete,
};

#[tokio::test(start_paused = true)]
async fn interrupt_a_new_input_stops_the_running_turn_and_nothing_of_it_follows() {
    let rig = rig(
        InterruptMode::Interrupt,
        [Reply::words("one", 100), Reply::words("two", 3)],
    );
    let oi = &rig.oi;
    say(oi, "first", input(1, 1));
    until(oi, |out| has_word(out, "one3")).await;
    assert!(oi.running());
    say(oi, "second", input(1, 2));
    assert!(oi.running(), "the new input's turn runs at once");
    marker(oi, "after");
    // What the first turn sent before the new input was taken may still be queued.
    let before = until(oi, |out| is_marker(out, "after")).await;
    assert!(!before.iter().any(is_complete), "{before:?}");
    let after = until_complete(oi).await;
    assert!(!after.iter().any(|out| has_word(out, "one")), "{after:?}");
    assert!(after.iter().any(|out| has_word(out, "two2")), "{after:?}");
    assert_eq!(after.last().unwrap().answers, input(1, 2));
    quiet(oi).await;
    assert_eq!(
        rig.model.open_streams(),
        0,
        "the first turn's request is dropped"
    );
}

#[tokio::test(start_paused = true)]
async fn queue_inputs_are_answered_in_order_each_with_its_complete() {
    let rig = rig(
        InterruptMode::Queue,
        [
            Reply::words("one", 5),
            Reply::words("two", 5),
            Reply::words("three", 5),
        ],
    );
    let oi = &rig.oi;
    say(oi, "first", input(1, 1));
    say(oi, "second", input(1, 2));
    say(oi, "third", input(1, 3));
    for (number, tag, others) in [
        (1, "one", ["two", "three"]),
        (2, "two", ["one", "three"]),
        (3, "three", ["one", "two"]),
    ] {
        let turn = until_complete(oi).await;
        assert_eq!(turn.last().unwrap().answers, input(1, number));
        assert!(turn.iter().any(|out| has_word(out, &format!("{tag}4"))));
        for other in others {
            assert!(!turn.iter().any(|out| has_word(out, other)), "{turn:?}");
        }
    }
    quiet(oi).await;
    assert!(!oi.running());
}

#[tokio::test(start_paused = true)]
async fn go_resumes_the_parked_turn_and_its_complete_answers_the_go() {
    let rig = rig(
        InterruptMode::Interrupt,
        [Reply::code("print(1)"), Reply::words("done", 2)],
    );
    let oi = &rig.oi;
    say(oi, "run it", input(1, 1));
    let parked = until_complete(oi).await;
    assert!(parked.iter().any(is_confirmation), "{parked:?}");
    assert_eq!(parked.last().unwrap().answers, input(1, 1));
    assert!(!oi.running(), "a parked turn does not run");
    assert!(rig.computer.runs().is_empty());
    // A `go` sent without `start` (content, then `end`) reaches the parked turn as it is.
    oi.act(Step::Ended(Input::Go), input(1, 2));
    assert!(oi.running());
    let resumed = until_complete(oi).await;
    assert!(!resumed.iter().any(is_confirmation), "{resumed:?}");
    assert!(
        resumed.iter().any(|out| has_word(out, "done1")),
        "{resumed:?}"
    );
    assert_eq!(resumed.last().unwrap().answers, input(1, 2));
    assert_eq!(rig.computer.runs().len(), 1);
    assert_eq!(rig.computer.runs()[0].code, "print(1)");
    quiet(oi).await;
}

#[tokio::test(start_paused = true)]
async fn stop_while_running_answers_complete_and_nothing_of_the_turn_follows() {
    let rig = rig(InterruptMode::Interrupt, [Reply::words("one", 1000)]);
    let oi = &rig.oi;
    say(oi, "first", input(1, 1));
    until(oi, |out| has_word(out, "one2")).await;
    command(oi, Input::Stop, input(1, 2));
    assert!(!oi.running(), "stopped the moment `stop` is sent");
    let stopped = until_complete(oi).await;
    let complete = stopped.last().unwrap();
    assert_eq!(
        complete.answers,
        input(1, 2),
        "no complete for the stopped turn"
    );
    assert!(
        complete.usage.is_some(),
        "the stop's complete carries usage"
    );
    quiet(oi).await;
    assert_eq!(rig.model.open_streams(), 0);
}

#[tokio::test(start_paused = true)]
async fn stop_while_parked_then_go_runs_exactly_that_code() {
    let rig = rig(
        InterruptMode::Interrupt,
        [Reply::code("print(2)"), Reply::words("after", 2)],
    );
    let oi = &rig.oi;
    say(oi, "run it", input(1, 1));
    until_complete(oi).await;
    command(oi, Input::Stop, input(1, 2));
    let stopped = until_complete(oi).await;
    assert_eq!(stopped.len(), 1, "{stopped:?}");
    assert_eq!(stopped[0].answers, input(1, 2));
    assert!(
        rig.computer.runs().is_empty(),
        "the stopped block did not run"
    );
    // No turn is parked now, but the conversation ends with the code: `go` runs it, unasked.
    command(oi, Input::Go, input(1, 3));
    let ran = until_complete(oi).await;
    assert!(!ran.iter().any(is_confirmation), "{ran:?}");
    assert_eq!(ran.last().unwrap().answers, input(1, 3));
    assert_eq!(rig.computer.runs().len(), 1);
    assert_eq!(rig.computer.runs()[0].code, "print(2)");
    quiet(oi).await;
}

#[tokio::test(start_paused = true)]
async fn stop_with_queued_inputs_sends_their_answers_before_its_own() {
    let rig = rig(InterruptMode::Queue, [Reply::words("one", 1000)]);
    let oi = &rig.oi;
    say(oi, "first", input(1, 1));
    say(oi, "second", input(1, 2));
    say(oi, "third", input(1, 3));
    until(oi, |out| has_word(out, "one1")).await;
    command(oi, Input::Stop, input(1, 4));
    let mut answered = Vec::new();
    let mut errors = 0;
    while answered.len() < 3 {
        let out = next(oi).await;
        assert!(
            !has_word(&out, "one"),
            "nothing of the stopped turn: {out:?}"
        );
        if is_error(&out) {
            errors += 1;
        }
        if is_complete(&out) {
            answered.push(out.answers);
        }
    }
    assert_eq!(answered, [input(1, 2), input(1, 3), input(1, 4)]);
    assert_eq!(errors, 2, "each dropped input gets its error");
    quiet(oi).await;
}

#[tokio::test(start_paused = true)]
async fn an_input_while_parked_stops_the_parked_turn_and_is_answered() {
    let rig = rig(
        InterruptMode::Interrupt,
        [Reply::code("print(3)"), Reply::words("fresh", 2)],
    );
    let oi = &rig.oi;
    let chunk = |value: serde_json::Value| async move { oi.input(&value).await.unwrap() };
    chunk(json!({"role": "user", "type": "message", "start": true})).await;
    chunk(json!({"role": "user", "type": "message", "content": "run it"})).await;
    assert!(oi.pending_bytes().await > 0);
    chunk(json!({"role": "user", "type": "message", "end": true})).await;
    assert!(oi.running(), "running once `input` returns");
    let parked = until_complete(oi).await;
    assert!(parked.iter().any(is_confirmation));
    assert_eq!(parked.last().unwrap().answers, None);
    chunk(json!({"role": "user", "type": "message", "start": true})).await;
    chunk(json!({"role": "user", "type": "message", "content": "no, this"})).await;
    chunk(json!({"role": "user", "type": "message", "end": true})).await;
    let fresh = until_complete(oi).await;
    assert!(fresh.iter().any(|out| has_word(out, "fresh1")), "{fresh:?}");
    assert!(rig.computer.runs().is_empty(), "the parked block never ran");
    assert_eq!(oi.pending_bytes().await, 0);
    quiet(oi).await;
}

#[tokio::test(start_paused = true)]
async fn a_new_connections_input_while_a_turn_streams_takes_over_the_output() {
    let rig = rig(
        InterruptMode::Interrupt,
        [Reply::words("old", 1000), Reply::words("new", 3)],
    );
    let oi = rig.oi.clone();
    say(&oi, "first", input(1, 1));
    // The first connection's writer reads a while, then goes away while it waits.
    let writer = {
        let oi = oi.clone();
        tokio::spawn(async move {
            loop {
                let batch = oi.next_batch(64).await;
                assert!(!batch.is_empty());
            }
        })
    };
    tokio::time::sleep(Duration::from_millis(55)).await;
    writer.abort();
    let _ = writer.await;
    // The next connection sends while the turn streams, and its writer reads on.
    say(&oi, "second", input(2, 1));
    marker(&oi, "after");
    until(&oi, |out| is_marker(out, "after")).await;
    let answer = until_complete(&oi).await;
    assert!(!answer.iter().any(|out| has_word(out, "old")), "{answer:?}");
    assert!(answer.iter().any(|out| has_word(out, "new2")), "{answer:?}");
    assert_eq!(answer.last().unwrap().answers, input(2, 1));
    quiet(&oi).await;
}

#[tokio::test(start_paused = true)]
async fn dropping_a_separate_turns_receiver_stops_the_turn() {
    let rig = rig(InterruptMode::Interrupt, [Reply::words("apart", 1000)]);
    let oi = &rig.oi;
    let mut output = oi
        .run_separately(TurnStart::Chat(vec![Message::user("hi")]))
        .await;
    assert!(oi.running());
    let mut seen = 0;
    while seen < 3 {
        let chunk = output.recv().await.unwrap();
        seen += usize::from(chunk.text().is_some_and(|t| t.starts_with("apart")));
    }
    assert_eq!(rig.model.open_streams(), 1);
    drop(output);
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert!(!oi.running(), "the turn stopped");
    assert_eq!(rig.model.open_streams(), 0, "its request is dropped");
    quiet(oi).await;
}

#[tokio::test(start_paused = true)]
async fn a_separate_turn_ends_its_receiver_after_complete() {
    let rig = rig(InterruptMode::Interrupt, [Reply::words("apart", 3)]);
    let oi = &rig.oi;
    let mut output = oi
        .run_separately(TurnStart::Chat(vec![Message::user("hi")]))
        .await;
    let mut chunks = Vec::new();
    while let Some(out) = output.recv_out().await {
        chunks.push(out);
    }
    assert!(is_complete(chunks.last().unwrap()), "{chunks:?}");
    assert!(!oi.running());
    quiet(oi).await;
}

#[tokio::test(start_paused = true)]
async fn no_chunk_of_a_stopped_turn_arrives_after_the_stop() {
    let replies = (0..20).map(|i| Reply::words(&format!("t{i}x"), 1000));
    let rig = rig(InterruptMode::Interrupt, replies);
    let oi = &rig.oi;
    for i in 0..20u64 {
        say(oi, "go on", input(1, 2 * i + 1));
        // Let it stream a varying while.
        tokio::time::sleep(Duration::from_millis(5 + 7 * i)).await;
        oi.stop().await;
        assert!(!oi.running());
        marker(oi, &i.to_string());
        until(oi, |out| is_marker(out, &i.to_string())).await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        marker(oi, "quiet");
        let between = until(oi, |out| is_marker(out, "quiet")).await;
        assert_eq!(
            between.len(),
            1,
            "turn {i} sent after its stop: {between:?}"
        );
    }
    assert_eq!(rig.model.open_streams(), 0);
}

#[tokio::test(start_paused = true)]
async fn act_failed_is_answered_in_its_turn_in_queue_mode() {
    let rig = rig(InterruptMode::Queue, [Reply::words("one", 5)]);
    let oi = &rig.oi;
    say(oi, "first", input(1, 1));
    let error = oi_session::InputError::UnknownCommand("dance".into());
    oi.act_failed(&error, input(1, 2));
    let first = until_complete(oi).await;
    assert_eq!(first.last().unwrap().answers, input(1, 1));
    assert!(!first.iter().any(is_error), "{first:?}");
    let failed = until_complete(oi).await;
    assert_eq!(failed.len(), 2, "{failed:?}");
    assert!(is_error(&failed[0]));
    assert_eq!(failed[1].answers, input(1, 2));
    quiet(oi).await;
}

#[tokio::test]
async fn a_session_made_outside_a_runtime_starts_on_first_use() {
    let rig = std::thread::spawn(|| rig(InterruptMode::Interrupt, [Reply::words("late", 2)]))
        .join()
        .unwrap();
    let oi = &rig.oi;
    oi.emit(oi_core::Chunk::console_output("early"));
    assert_eq!(next(oi).await.chunk.text(), Some("early"));
    say(oi, "hi", input(1, 1));
    let turn = until_complete(oi).await;
    assert!(turn.iter().any(|out| has_word(out, "late1")), "{turn:?}");
}

#[tokio::test(start_paused = true)]
async fn queue_a_parked_turn_lets_the_queue_go_on() {
    let rig = rig(
        InterruptMode::Queue,
        [Reply::code("print(4)"), Reply::words("next", 2)],
    );
    let oi = &rig.oi;
    say(oi, "run it", input(1, 1));
    say(oi, "then this", input(1, 2));
    let parked = until_complete(oi).await;
    assert!(parked.iter().any(is_confirmation), "{parked:?}");
    assert_eq!(parked.last().unwrap().answers, input(1, 1));
    let queued = until_complete(oi).await;
    assert!(
        queued.iter().any(|out| has_word(out, "next1")),
        "{queued:?}"
    );
    assert_eq!(queued.last().unwrap().answers, input(1, 2));
    assert!(
        rig.computer.runs().is_empty(),
        "the parked block was stopped, not run"
    );
    quiet(oi).await;
}

#[tokio::test(start_paused = true)]
async fn a_separate_go_resumes_the_parked_turn_into_its_own_receiver() {
    let rig = rig(
        InterruptMode::Interrupt,
        [Reply::code("print(5)"), Reply::words("apart", 2)],
    );
    let oi = &rig.oi;
    say(oi, "run it", input(1, 1));
    until_complete(oi).await;
    let mut output = oi.run_separately(TurnStart::Go).await;
    let mut chunks = Vec::new();
    while let Some(out) = output.recv_out().await {
        chunks.push(out);
    }
    assert!(
        chunks.iter().any(|out| has_word(out, "apart1")),
        "{chunks:?}"
    );
    assert!(is_complete(chunks.last().unwrap()));
    assert_eq!(rig.computer.runs()[0].code, "print(5)");
    quiet(oi).await;
}

#[test]
fn running_is_right_the_moment_act_returns() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap();
    runtime.block_on(async {
        let rig = rig(InterruptMode::Interrupt, [Reply::words("one", 1000)]);
        let oi = &rig.oi;
        // No await between these: the actor has not run yet.
        say(oi, "first", input(1, 1));
        assert!(oi.running());
        oi.act(Step::Opened, input(1, 2));
        assert!(!oi.running(), "a new input's start stops the turn");
        oi.act(
            Step::Ended(Input::Messages(vec![Message::user("second")])),
            input(1, 2),
        );
        assert!(oi.running());
        oi.act(Step::Ended(Input::Stop), input(1, 3));
        assert!(!oi.running());
        let stopped = until_complete(oi).await;
        assert_eq!(stopped.last().unwrap().answers, input(1, 3));
        assert!(!oi.running());
    });
}
