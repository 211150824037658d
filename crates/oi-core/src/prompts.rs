//! Open Interpreter 0.4.3's prompts and templates, verbatim (spec b.1, b.6, b.10, b.11).
//! Model behaviour depends on these words, so they are not to be edited.

/// The default system message, before the user name and OS lines.
pub const DEFAULT_SYSTEM_MESSAGE_BODY: &str = "You are Open Interpreter, a world-class programmer that can complete any goal by executing code.
For advanced requests, start by writing a plan.
When you execute code, it will be executed **on the user's machine**. The user has given you **full and complete permission** to execute any code necessary to complete the task. Execute the code.
You can access the internet. Run **any code** to achieve the goal, and if at first you don't succeed, try again and again.
You can install new packages.
When a user refers to a filename, they're likely referring to an existing file in the directory you're currently executing code in.
Write messages to the user in Markdown.
In general, try to **make plans** with as few steps as possible. As for actually executing code to carry out that plan, for *stateful* languages (like python, javascript, shell, but NOT for html which starts from 0 every time) **it's critical not to try to do everything in one code block.** You should try something, print information about it, then continue from there in tiny, informed steps. You will never get it on the first try, and attempting it in one go will often lead to errors you cant see.
You are capable of **any** task.";

/// The default system message with the user's name and OS filled in, as the original builds it.
pub fn default_system_message() -> String {
    format!(
        "{DEFAULT_SYSTEM_MESSAGE_BODY}\n\nUser's Name: {}\nUser's OS: {}",
        user_name(),
        os_name()
    )
}

/// The login name, as Python's `getpass.getuser()` finds it.
pub fn user_name() -> String {
    ["LOGNAME", "USER", "LNAME", "USERNAME"]
        .iter()
        .find_map(|key| std::env::var(key).ok().filter(|v| !v.is_empty()))
        .unwrap_or_else(|| "user".to_owned())
}

/// The OS name as Python's `platform.system()` spells it.
pub fn os_name() -> &'static str {
    match std::env::consts::OS {
        "linux" => "Linux",
        "macos" => "Darwin",
        "windows" => "Windows",
        "freebsd" => "FreeBSD",
        other => other,
    }
}

/// Appended to the system message in text (fenced-code) mode.
pub const EXECUTION_INSTRUCTIONS: &str = "To execute code on the user's machine, write a markdown code block. Specify the language after the ```. You will receive the output. Use any programming language.";

/// The hidden user message injected in loop mode.
pub const LOOP_MESSAGE: &str = "Proceed. You CAN run code on my machine. If the entire task I asked for is done, say exactly 'The task is done.' If you need some specific information (like username or password) say EXACTLY 'Please provide more information.' If it's impossible, say 'The task is impossible.' (If I haven't provided a task, say exactly 'Let me know what you'd like to do next.') Otherwise keep going.";

/// Phrases that end loop mode.
pub const LOOP_BREAKERS: [&str; 4] = [
    "The task is done.",
    "The task is impossible.",
    "Let me know what you'd like to do next.",
    "Please provide more information.",
];

/// How code output is sent back in text mode.
pub const CODE_OUTPUT_TEMPLATE: &str = "Code output: {content}\n\nWhat does this output mean / what's next (if anything, or are we done)?";

/// What is sent back in text mode when code printed nothing.
pub const EMPTY_CODE_OUTPUT_TEMPLATE: &str = "The code above was executed on my machine. It produced no text output. what's next (if anything, or are we done?)";

/// The user message template.
pub const USER_MESSAGE_TEMPLATE: &str = "{content}";

/// What the model is told when the user declines a code block.
pub const DECLINED_MESSAGE: &str = "I have declined to run this code.";

/// What the model is told about an empty code block.
pub const EMPTY_CODE_MESSAGE: &str =
    "Code block was empty. Please try again, be sure to write code before executing.";

/// The console text for a language that is not available.
pub fn unsupported_language_message(language: &str) -> String {
    format!("`{language}` disabled or not supported.")
}

/// The `execute` tool's description.
pub const EXECUTE_TOOL_DESCRIPTION: &str =
    "Executes code on the user's machine **in the users local environment** and returns the output";

/// The system message's "THE COMPUTER API" section (spec b.1, d.1), added while
/// `import_computer_api` is on: the original's frame around one line per method that exists
/// in oi's headless `computer` (the screen, mouse, keyboard, mail and other desktop tools
/// are left out: oi refuses them).
pub const COMPUTER_API_SYSTEM_MESSAGE: &str = "# THE COMPUTER API
A python `computer` module is ALREADY IMPORTED, and can be used for many tasks:
```python
computer.ai.chat(text) # Asks the language model `text` and returns its answer.
computer.ai.query(text, query, custom_reduce_query=None) # Asks `query` of a long `text`, chunk by chunk, and returns the combined answer.
computer.ai.summarize(text) # Summarizes a long text into a concise paragraph.
computer.files.edit(path, original_text, replacement_text) # Edits a file on the filesystem, replacing the original text with the replacement text.
computer.files.search(query, paths=None) # Searches the text files under `paths` (default: the working directory) for `query` and returns the matching lines.
computer.skills.list() # Lists the saved skills.
computer.skills.search(query) # Lists the saved skills whose name or code mention `query`.
computer.skills.import_skills() # Defines every saved skill (a Python function of the same name) in this session.
computer.skills.save(name, code) # Saves `code`, which defines the function `name`, as a skill for later sessions.
computer.terminal.run(language, code) # Runs python or shell code and returns its output as a list of messages.
computer.os.notify(text) # Shows a notification to the user.
```
Do not import the computer module, or any of its sub-modules. They are already imported.";
