# oi ruby driver: runs code blocks sent as JSON lines on the original stdin in one persistent
# binding, and reports events on stdout framed by "\x1eOI<nonce>{json}\n".
require "json"
require "ripper"

module OiDriver
  PREFIX = "\x1eOI" + ENV.delete("OI_NONCE").to_s
  # Commands come on a private copy of fd 0; user code and its children read EOF from fd 0.
  Encoding.default_external = Encoding::UTF_8
  CMD = STDIN.dup
  CMD.set_encoding(Encoding::UTF_8)
  STDIN.reopen(File::NULL)
  STDERR.reopen(STDOUT)
  STDOUT.sync = true
  STDERR.sync = true
  QUIET = %i[assign opassign massign def defs class module command command_call void_stmt].freeze

  @running = false
  @run = 0
  @last_line = 0
  @lines = 0
  @line_time = 0.0

  class << self
    attr_accessor :running
  end

  def self.emit(event)
    STDOUT.write(PREFIX + JSON.generate(event) + "\n")
  end

  # The user's local variables live in one binding whose self is main.
  BINDING = TOPLEVEL_BINDING.eval("proc { binding }").call

  def self.line(path, n)
    return if path != @file || n == @last_line
    @last_line = n
    @lines += 1
    if @lines > 1000
      now = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      return if now - @line_time < 0.05
      @line_time = now
    end
    emit({ ev: "line", n: n })
  end

  def self.show_value?(code)
    tree = Ripper.sexp(code)
    return false unless tree && tree[1].is_a?(Array) && !tree[1].empty?
    last = tree[1].last
    last.is_a?(Array) && !QUIET.include?(last[0])
  rescue StandardError
    false
  end

  # Prints an error like Ruby does, without the driver's frames.
  def self.report(error)
    frames = (error.backtrace || []).select { |l| l.start_with?("(cell ") }
    message = error.message.to_s
    head = frames.empty? ? "" : "#{frames[0]}: "
    text = message.empty? ? error.class.to_s : "#{message.chomp} (#{error.class})"
    STDERR.write("#{head}#{text}\n" + frames.drop(1).map { |f| "\tfrom #{f}\n" }.join)
  end

  def self.execute(run, code)
    @run = run
    @last_line = 0
    @lines = 0
    @file = "(cell #{run})"
    trace = TracePoint.new(:line) { |tp| OiDriver.line(tp.path, tp.lineno) }
    begin
      @running = true
      trace.enable
      value = BINDING.eval(code, @file, 1)
      trace.disable
      @running = false
      puts value.inspect if !value.nil? && show_value?(code)
    rescue SystemExit => e
      trace.disable
      @running = false
      STDERR.write("SystemExit: #{e.status}\n") unless e.success?
    rescue Exception => e # rubocop:disable Lint/RescueException
      trace.disable
      @running = false
      report(e)
    ensure
      trace.disable
      @running = false
      $stdout.flush rescue nil
    end
  end

  def self.main
    trap("INT") { raise Interrupt if OiDriver.running }
    loop do
      line = begin
        CMD.gets
      rescue Interrupt
        next
      end
      break if line.nil?
      command = JSON.parse(line) rescue next
      run = command["id"].to_i
      begin
        emit({ ev: "start", id: run })
        execute(run, command["code"].to_s)
      rescue Interrupt
        nil
      ensure
        begin
          emit({ ev: "done", id: run })
        rescue Interrupt
          retry
        end
      end
    end
  end
end

OiDriver.main
