//! The everyday tasks of `cargo xtask bench-tasks`: what the folder holds before the run, what
//! the user asks, a known-good solution (what the scripted model answers, so that CI checks
//! the harness and the checkers against real interpreters) and the check of the result.

use super::check::Check;

/// A file's content before the run.
#[derive(Debug, Clone, Copy)]
pub enum Content {
    /// This text.
    Text(&'static str),
    /// `PREFIX 1\nPREFIX 2\n…PREFIX N\n`.
    Numbered(&'static str, usize),
    /// This many bytes (`x`), for listings by size.
    Bytes(usize),
}

impl Content {
    /// The bytes to write.
    pub fn render(self) -> String {
        match self {
            Content::Text(text) => text.to_owned(),
            Content::Numbered(prefix, n) => (1..=n).map(|i| format!("{prefix} {i}\n")).collect(),
            Content::Bytes(n) => "x".repeat(n),
        }
    }
}

/// One step of a known-good solution: what the scripted model replies.
#[derive(Debug, Clone, Copy)]
pub enum Step {
    /// A fenced code block in this language.
    Code(&'static str, &'static str),
    /// A plain answer (the last step).
    Say(&'static str),
}

/// One task.
#[derive(Debug, Clone, Copy)]
pub struct Task {
    /// Short name (the table's row).
    pub name: &'static str,
    /// What it exercises: python, shell, files, multi-step, error.
    pub kind: &'static str,
    /// What the user asks.
    pub prompt: &'static str,
    /// The folder's files before the run.
    pub files: &'static [(&'static str, Content)],
    /// A known-good solution.
    pub solution: &'static [Step],
    /// What counts as solved.
    pub check: Check,
}

use Check::{All, Command, File, InOrder, Says};
use Content::{Bytes, Numbered, Text};
use Step::{Code, Say};

/// The tasks, in table order.
pub const TASKS: &[Task] = &[
    Task {
        name: "product",
        kind: "python",
        prompt: "Compute 239023*79043.",
        files: &[],
        solution: &[
            Code("python", "print(239023*79043)"),
            Say("239023*79043 = 18893094989."),
        ],
        check: Says(&["18893094989"]),
    },
    Task {
        name: "count-lines",
        kind: "files",
        prompt: "How many lines does the file notes.txt have?",
        files: &[("notes.txt", Numbered("note", 137))],
        solution: &[
            Code("shell", "wc -l < notes.txt"),
            Say("notes.txt has 137 lines."),
        ],
        check: Says(&["137"]),
    },
    Task {
        name: "reverse",
        kind: "python",
        prompt: "Reverse the string 'interpreter'.",
        files: &[],
        solution: &[
            Code("python", "print('interpreter'[::-1])"),
            Say("Reversed: reterpretni"),
        ],
        check: Says(&["reterpretni"]),
    },
    Task {
        name: "csv-sum",
        kind: "files",
        prompt: "What is the sum of the amount column in sales.csv?",
        files: &[(
            "sales.csv",
            Text(
                "item,amount\napples,120\npears,75\nplums,310\ncherries,42\nfigs,18\nlemons,256\nlimes,97\n",
            ),
        )],
        solution: &[
            Code(
                "python",
                "import csv\nwith open('sales.csv') as f:\n    print(sum(float(r['amount']) for r in csv.DictReader(f)))",
            ),
            Say("The amounts add up to 918."),
        ],
        check: Says(&["918"]),
    },
    Task {
        name: "create-file",
        kind: "files",
        prompt: "Create a file named hello.txt that contains exactly the text: Hello, world!",
        files: &[],
        solution: &[
            Code(
                "python",
                "with open('hello.txt', 'w') as f:\n    f.write('Hello, world!')\nprint(open('hello.txt').read())",
            ),
            Say("hello.txt is written."),
        ],
        check: File("hello.txt", "Hello, world!"),
    },
    Task {
        name: "weekday",
        kind: "python",
        prompt: "What day of the week was 15 March 2024?",
        files: &[],
        solution: &[
            Code(
                "python",
                "import datetime\nprint(datetime.date(2024, 3, 15).strftime('%A'))",
            ),
            Say("15 March 2024 was a Friday."),
        ],
        check: Says(&["Friday"]),
    },
    Task {
        name: "logs-by-size",
        kind: "files",
        prompt: "List the .log files in this folder from largest to smallest.",
        files: &[
            ("db.log", Bytes(120)),
            ("app.log", Bytes(3000)),
            ("notes.txt", Bytes(5000)),
            ("web.log", Bytes(900)),
        ],
        solution: &[
            Code("shell", "ls -S *.log"),
            Say("Largest first: app.log, web.log, db.log."),
        ],
        check: InOrder(&["app.log", "web.log", "db.log"]),
    },
    Task {
        name: "fibonacci",
        kind: "python",
        prompt: "What is the 20th Fibonacci number? Count F(1) = 1 and F(2) = 1.",
        files: &[],
        solution: &[
            Code(
                "python",
                "a, b = 1, 1\nfor _ in range(18):\n    a, b = b, a + b\nprint(b)",
            ),
            Say("The 20th Fibonacci number is 6765."),
        ],
        check: Says(&["6765"]),
    },
    Task {
        name: "grep",
        kind: "shell",
        prompt: "Use the shell to show the lines of server.log that contain ERROR.",
        files: &[(
            "server.log",
            Text(
                "INFO start\nINFO listening on 8080\nERROR disk full on sdb\nINFO request 1\nWARN slow request 2\nERROR timeout talking to db-7\nINFO request 3\nINFO request 4\nERROR user 4411 not found\nINFO stop\n",
            ),
        )],
        solution: &[
            Code("shell", "grep ERROR server.log"),
            Say("Three lines contain ERROR."),
        ],
        check: Says(&[
            "disk full on sdb",
            "timeout talking to db-7",
            "user 4411 not found",
        ]),
    },
    Task {
        name: "date-diff",
        kind: "python",
        prompt: "How many days are there from 2024-01-15 to 2024-04-02?",
        files: &[],
        solution: &[
            Code(
                "python",
                "import datetime\nprint((datetime.date(2024, 4, 2) - datetime.date(2024, 1, 15)).days)",
            ),
            Say("78 days."),
        ],
        check: Says(&["78"]),
    },
    Task {
        name: "fix-script",
        kind: "error",
        prompt: "Run broken.py. It fails: fix the bug in the file, then run it again.",
        files: &[(
            "broken.py",
            Text("prices = [4, 8, 15]\nprint('total:', sum(prics))\n"),
        )],
        solution: &[
            Code("shell", "python3 broken.py"),
            Code(
                "python",
                "text = open('broken.py').read().replace('sum(prics)', 'sum(prices)')\nopen('broken.py', 'w').write(text)",
            ),
            Code("shell", "python3 broken.py"),
            Say("Fixed the misspelt name; it prints total: 27."),
        ],
        check: Command("python3 broken.py", "total: 27"),
    },
    Task {
        name: "numbers-folder",
        kind: "multi-step",
        prompt: "Create a folder named out, write the numbers 1 to 5 into out/numbers.txt (one per line), then tell me their sum.",
        files: &[],
        solution: &[
            Code(
                "python",
                "import os\nos.makedirs('out', exist_ok=True)\nwith open('out/numbers.txt', 'w') as f:\n    f.write('\\n'.join(str(i) for i in range(1, 6)) + '\\n')\nprint(sum(range(1, 6)))",
            ),
            Say("Written; the sum is 15."),
        ],
        check: All(&[File("out/numbers.txt", "1\n2\n3\n4\n5"), Says(&["15"])]),
    },
    Task {
        name: "word-count",
        kind: "shell",
        prompt: "Use the shell to count the words in poem.txt.",
        files: &[(
            "poem.txt",
            Text(
                "the quick brown fox jumps over the lazy dog\nand then the fox sleeps in the warm sun\nwhile the dog keeps watch by the old gate\n",
            ),
        )],
        solution: &[
            Code("shell", "wc -w < poem.txt"),
            Say("poem.txt has 27 words."),
        ],
        check: Says(&["27"]),
    },
    Task {
        name: "sort-lines",
        kind: "files",
        prompt: "Sort the lines of names.txt alphabetically and save the result to sorted.txt.",
        files: &[(
            "names.txt",
            Text("Mallory\nAlice\nOscar\nBob\nEve\nCarol\n"),
        )],
        solution: &[
            Code("shell", "sort names.txt > sorted.txt && cat sorted.txt"),
            Say("sorted.txt holds the sorted names."),
        ],
        check: File("sorted.txt", "Alice\nBob\nCarol\nEve\nMallory\nOscar"),
    },
    Task {
        name: "json-field",
        kind: "files",
        prompt: "What is the version in config.json?",
        files: &[(
            "config.json",
            Text("{\"name\": \"gadget\", \"version\": \"3.14.2\", \"debug\": false}\n"),
        )],
        solution: &[
            Code(
                "python",
                "import json\nprint(json.load(open('config.json'))['version'])",
            ),
            Say("The version is 3.14.2."),
        ],
        check: Says(&["3.14.2"]),
    },
    Task {
        name: "uppercase-file",
        kind: "files",
        prompt: "Write the text of message.txt in upper case into a new file upper.txt.",
        files: &[("message.txt", Text("meet me at the station at noon\n"))],
        solution: &[
            Code(
                "python",
                "text = open('message.txt').read()\nopen('upper.txt', 'w').write(text.upper())\nprint(text.upper())",
            ),
            Say("upper.txt is written."),
        ],
        check: File("upper.txt", "MEET ME AT THE STATION AT NOON"),
    },
    Task {
        name: "count-py-files",
        kind: "shell",
        prompt: "How many .py files are in this folder?",
        files: &[
            ("a.py", Text("")),
            ("b.py", Text("")),
            ("c.py", Text("")),
            ("d.py", Text("")),
            ("e.py", Text("")),
            ("f.py", Text("")),
            ("g.py", Text("")),
            ("h.py", Text("")),
            ("i.py", Text("")),
            ("j.py", Text("")),
            ("k.py", Text("")),
            ("readme.txt", Text("")),
            ("data.csv", Text("")),
        ],
        solution: &[
            Code("shell", "ls *.py | wc -l"),
            Say("There are 11 .py files."),
        ],
        check: Says(&["11"]),
    },
    Task {
        name: "largest-city",
        kind: "files",
        prompt: "Which city in cities.csv has the largest population?",
        files: &[(
            "cities.csv",
            Text(
                "city,population\nNorberg,52000\nVellmar,918000\nOstwick,430500\nBramford,77000\n",
            ),
        )],
        solution: &[
            Code(
                "python",
                "import csv\nrows = list(csv.DictReader(open('cities.csv')))\nprint(max(rows, key=lambda r: int(r['population']))['city'])",
            ),
            Say("Vellmar has the largest population."),
        ],
        check: Says(&["Vellmar"]),
    },
    Task {
        name: "prime-100",
        kind: "python",
        prompt: "What is the 100th prime number?",
        files: &[],
        solution: &[
            Code(
                "python",
                "primes = []\nn = 2\nwhile len(primes) < 100:\n    if all(n % p for p in primes):\n        primes.append(n)\n    n += 1\nprint(primes[-1])",
            ),
            Say("The 100th prime is 541."),
        ],
        check: Says(&["541"]),
    },
    Task {
        name: "factorial",
        kind: "python",
        prompt: "What is 15 factorial?",
        files: &[],
        solution: &[
            Code("python", "import math\nprint(math.factorial(15))"),
            Say("15! = 1307674368000."),
        ],
        check: Says(&["1307674368000"]),
    },
    Task {
        name: "replace-word",
        kind: "files",
        prompt: "In greeting.txt, replace every 'cat' with 'dog' and save the file.",
        files: &[("greeting.txt", Text("the cat sat on the cat mat\n"))],
        solution: &[
            Code(
                "shell",
                "sed -i 's/cat/dog/g' greeting.txt && cat greeting.txt",
            ),
            Say("Done."),
        ],
        check: File("greeting.txt", "the dog sat on the dog mat"),
    },
    Task {
        name: "char-count",
        kind: "files",
        prompt: "How many characters are in the file secret.txt?",
        files: &[("secret.txt", Text("open sesame 42"))],
        solution: &[
            Code("python", "print(len(open('secret.txt').read()))"),
            Say("secret.txt has 14 characters."),
        ],
        check: Says(&["14"]),
    },
    Task {
        name: "average",
        kind: "python",
        prompt: "What is the average of 12, 45, 7, 88 and 23?",
        files: &[],
        solution: &[
            Code("python", "print(sum([12, 45, 7, 88, 23]) / 5)"),
            Say("The average is 35."),
        ],
        check: Says(&["35"]),
    },
    Task {
        name: "bad-line-total",
        kind: "error",
        prompt: "data.txt has one number per line. Print the total of the numbers.",
        files: &[("data.txt", Text("17\n25\nn/a\n33\n41\n"))],
        solution: &[
            Code(
                "python",
                "print(sum(int(line) for line in open('data.txt')))",
            ),
            Code(
                "python",
                "total = 0\nfor line in open('data.txt'):\n    line = line.strip()\n    if line.lstrip('-').isdigit():\n        total += int(line)\nprint(total)",
            ),
            Say("The numbers add up to 116 (one line, n/a, is not a number)."),
        ],
        check: Says(&["116"]),
    },
];
