%% Hostile scenario and Tsung files (issue 15, "Hostile input"; issue 31): every file of this
%% suite's data directory, and special files made here, run through the real command line, is
%% refused while it is read: exit 2 within 5 s, under 200 MB, at most 3 lines naming the file and
%% a line, no internal error or crash report; some messages must hold a given fragment.
-module(beamscale_hostile_input_SUITE).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([suite/0, all/0, tsung_files/0, tsung_files/1, terms_files/0, terms_files/1,
         special_files/0, special_files/1]).

%% The issue's bounds: a refusal within 5 s (emulator start included) and under 200 MB. The
%% time is scaled by the host's load per core when above 1 (max_ms/0): beside dialyzer and
%% another CT stream at load 25, an escript's start alone took seconds.
-define(MAX_MS, 5000).
-define(MAX_KB, 200 * 1024).
%% How often the command's peak memory (VmHWM) is read while it runs.
-define(POLL_MS, 20).
-define(MAX_LINES, 3).

%% About 120 files of about 1 s each, run one after the other.
suite() -> [{timetrap, {minutes, 8}}].

all() -> [tsung_files, terms_files, special_files].

tsung_files() -> [{doc, "Every hostile .xml file is refused: exit 2, in time, in memory, named."}].
tsung_files(Config) -> run_all(Config, ".xml").

terms_files() -> [{doc, "Every hostile .scenario file is refused: exit 2, in time, in memory."}].
terms_files(Config) -> run_all(Config, ".scenario").

special_files() ->
    [{doc, "Files made here (a symlink to /dev/zero, a FIFO, 900 000 digits, a config whose "
      "code_path matches 1001 files) are refused: exit 2, in time, in memory, named (issue 31)."}].
special_files(Config) ->
    Dir = filename:join(?config(priv_dir, Config), "special"),
    ok = filelib:ensure_path(Dir),
    Made = [{make(Dir, Spec), Args, Fragment} || {Spec, Args, Fragment} <- specials()],
    Failed = [{F, Why} || {F, Args, Fragment} <- Made,
                          Why <- [check_again(F, Args(F), Fragment, ?config(priv_dir, Config))],
                          Why =/= ok],
    [ct:pal("~ts: ~tp", [F, W]) || {F, W} <- Failed],
    ?assertEqual([], Failed).

%% What is made, the command run on it, and a fragment its one line must hold.
specials() ->
    Load = fun(F) -> ["load", F, "--name", "hostile"] end,
    Run = fun(F) -> ["run", "--config", F, "--name", "hostile"] end,
    Rate = ["{targets, [{web, #{address => \"127.0.0.1:1\"}}]}.\n",
            "{phases, [{p1, #{duration_s => 2, rate => ", lists:duplicate(900000, $9), "}}]}.\n",
            "{sessions, [{s, #{steps => [{http, #{path => \"/\"}}]}}]}.\n"],
    Data = ["{targets, [{web, #{address => \"127.0.0.1:1\"}}]}.\n",
            "{phases, [{p1, #{duration_s => 2, rate => 5}}]}.\n",
            "{sessions, [{s, #{steps => [{http, #{path => \"/\"}}]}}]}.\n",
            "{files, [{users, \"users.fifo\"}]}.\n"],
    [{{symlink, "zero.scenario", "/dev/zero"}, Load, "not a regular file (a device)"},
     {{symlink, "zero.xml", "/dev/zero"}, Load, "not a regular file (a device)"},
     {{fifo, "fifo.scenario"}, Load, "not a regular file (a FIFO"},
     {{fifo, "fifo.xml"}, Load, "not a regular file (a FIFO"},
     {{dir, "dir.scenario"}, Load, "not a regular file (a directory)"},
     {{text, "digits.scenario", Rate}, Load, "more than 300 digits"},
     {{text_fifo, "data.scenario", Data, "users.fifo"}, Load, "not a regular file (a FIFO"},
     {{symlink, "zero.config", "/dev/zero"}, Run, "not a regular file (a device)"},
     {{fifo, "fifo.config"}, Run, "not a regular file (a FIFO"},
     {{many, "glob.config", 1001}, Run, "matches 1001 entries"}].

make(Dir, {symlink, Name, To}) ->
    F = filename:join(Dir, Name), ok = file:make_symlink(To, F), F;
make(Dir, {fifo, Name}) ->
    F = filename:join(Dir, Name), "" = os:cmd("mkfifo " ++ F), F;
make(Dir, {dir, Name}) ->
    F = filename:join(Dir, Name), ok = file:make_dir(F), F;
make(Dir, {text, Name, Text}) ->
    F = filename:join(Dir, Name), ok = file:write_file(F, Text), F;
make(Dir, {text_fifo, Name, Text, Fifo}) ->
    _ = make(Dir, {fifo, Fifo}), make(Dir, {text, Name, Text});
make(Dir, {many, Name, N}) ->
    Many = filename:join(Dir, "many"),
    ok = file:make_dir(Many),
    [ok = file:write_file(filename:join(Many, integer_to_list(I)), <<>>) || I <- lists:seq(1, N)],
    make(Dir, {text, Name, io_lib:format("{code_path, ~p}.~n", [Many ++ "/*"])}).

run_all(Config, Ext) ->
    Dir = ?config(data_dir, Config),
    Files = lists:sort(filelib:wildcard("*" ++ Ext, Dir)),
    ?assert(length(Files) >= 20),
    Expected = expected(),
    Failed = [{F, Why} || F <- Files,
                          Path <- [filename:join(Dir, F)],
                          Why <- [check_again(Path, load_args(Path), maps:get(F, Expected, ""),
                                              ?config(priv_dir, Config))],
                          Why =/= ok],
    [ct:pal("~ts: ~tp", [F, W]) || {F, W} <- Failed],
    ?assertEqual([], Failed).

%% A refusal that was right but late is tried once more: CI once saw two neighbouring files
%% (0.4 s each here) pass the 5 s bound while the host stalled; a real hang or blow-up is late
%% twice. The reasons are in the assertion, so CI's output says which bound was passed.
check_again(File, Args, Fragment, Out) ->
    case check(File, Args, Fragment, Out) of
        {took_ms, Ms, MaxMs} ->
            ct:pal("~ts: refused in ~b ms, over ~b ms; once more", [File, Ms, MaxMs]),
            check(File, Args, Fragment, Out);
        {did_not_end_within_ms, MaxMs, _, _} ->
            ct:pal("~ts: not ended in ~b ms; once more", [File, MaxMs]),
            check(File, Args, Fragment, Out);
        Verdict -> Verdict
    end.

%% A fragment the message of some files must hold (issue 31); the others need only be refused.
expected() ->
    Name = "a name of printable Latin-1 characters",
    Rate = "expected users per second from 2.32831e-7",
    Digits = "a number of more than 300 digits",
    #{"t39_cyrillic_phase.scenario" => "phases.'\\x{444}" ++ "\\x{430}",
      "t40_emoji_session.scenario" => Name, "t41_rtl_mark_transaction.scenario" => Name,
      "t42_escape_in_phase.scenario" => Name, "t43_denormal_rate.scenario" => Rate,
      "t44_tiny_rate.scenario" => Rate, "t45_negative_rate.scenario" => Rate,
      "t46_rate_atom.scenario" => "key phases.p1.rate",
      "t47_zero_interarrival.scenario" => "key phases.p1.interarrival_ms",
      "t48_digits_max_users.scenario" => Digits, "t49_digits_think.scenario" => Digits,
      "t50_digits_float.scenario" => Digits, "t51_newline_session_name.scenario" => Name,
      "t52_tab_transaction.scenario" => "key sessions.s.steps.transaction.'a\\tb'",
      "t53_cyrillic_target.scenario" => Name, "t54_zero_width_joiner.scenario" => Name,
      "t55_data_file_dev_zero.scenario" => "key files.users: /dev/zero: not a regular file",
      "t56_data_file_directory.scenario" => "not a regular file (a directory)",
      "t57_data_file_missing.scenario" => "no such file or directory",
      "t58_data_file_dev_null.scenario" => "/dev/null: not a regular file (a device)",
      "t60_rtl_override_phase.scenario" => Name, "t61_digits_in_key.scenario" => Digits,
      %% Garbage from its first byte: told from XML byte by byte (issue 55's regression).
      "t62_garbage_first_byte.scenario" => "not valid UTF-8 text",
      "x45_cyrillic_session.xml" => "not well-formed XML",
      "x46_emoji_transaction.xml" => "not well-formed XML",
      "x47_tiny_arrivalrate.xml" => Rate,
      "x48_denormal_interarrival.xml" => "interarrival=\"1e300\" is not a number",
      "x49_digits_duration.xml" => "key phases.phase1.duration_s",
      "x50_file_server_dev_zero.xml" => "/dev/zero: not a regular file (a device)",
      "x51_file_server_directory.xml" => "/tmp: not a regular file (a directory)",
      "x52_rtl_session.xml" => Name, "x53_control_session.xml" => "not well-formed XML"}.

%% One file through `beamscale load'.
load_args(File) -> ["load", File, "--name", "hostile"].

check(File, Args, Fragment, Out) ->
    MaxMs = max_ms(),
    T0 = erlang:monotonic_time(millisecond),
    Port = beamscale_test_cli:open(Args ++ ["--out", Out]),
    {os_pid, Pid} = erlang:port_info(Port, os_pid),
    case wait(Port, Pid, T0 + MaxMs, <<>>, 0) of
        {timeout, KB, Output} ->
            kill(Pid),
            {did_not_end_within_ms, MaxMs, KB, Output};
        {Code, KB, Output} ->
            Ms = erlang:monotonic_time(millisecond) - T0,
            verdict(File, Fragment, Code, {Ms, MaxMs}, KB, unicode:characters_to_list(Output))
    end.

%% 5 s, times the load average per core when the host runs more than a process per core.
max_ms() ->
    {ok, Avg} = file:read_file("/proc/loadavg"),
    [Load | _] = string:split(Avg, " "),
    PerCore = binary_to_float(Load) / erlang:system_info(logical_processors_available),
    round(?MAX_MS * max(1.0, PerCore)).

verdict(File, Fragment, Code, {Ms, MaxMs}, KB, Output) ->
    Lines = [L || L <- string:split(string:trim(Output), "\n", all), L =/= ""],
    %% The file literally: a path may hold regex characters (stream 2 logs in _build/ct2+test).
    Named = [L || L <- Lines, re:run(L, ["\\Q", File, "\\E:[0-9]+: "], [unicode]) =/= nomatch],
    Bad = [W || W <- ["internal error", "crash", "Stacktrace", "=ERROR REPORT", "** ",
                      "nothing answers", "reader failed"],
                string:find(Output, W) =/= nomatch],
    if Code =/= 2 -> {exit_code, Code, Output};
       KB > ?MAX_KB -> {peak_kb, KB, Output};
       Ms > MaxMs -> {took_ms, Ms, MaxMs};
       length(Lines) > ?MAX_LINES -> {lines, length(Lines), Output};
       Named =:= [] -> {no_file_and_line, Output};
       Bad =/= [] -> {says, Bad, Output};
       Fragment =/= "" -> case string:find(Output, Fragment) of
                              nomatch -> {does_not_say, Fragment, Output};
                              _ -> ok
                          end;
       true -> ok
    end.

%% Wait for the command's end, reading its peak resident memory (VmHWM, kB) as it runs.
wait(Port, Pid, Deadline, Acc, KB0) ->
    KB = max(KB0, peak_kb(Pid)),
    Left = Deadline - erlang:monotonic_time(millisecond),
    receive
        {Port, {data, D}} -> wait(Port, Pid, Deadline, <<Acc/binary, D/binary>>, KB);
        {Port, {exit_status, S}} -> {S, KB, Acc}
    after min(?POLL_MS, max(Left, 0)) ->
        case Left =< 0 of
            true -> {timeout, KB, Acc};
            false -> wait(Port, Pid, Deadline, Acc, KB)
        end
    end.

peak_kb(Pid) ->
    case file:read_file(["/proc/", integer_to_list(Pid), "/status"]) of
        {ok, Bin} ->
            case re:run(Bin, "VmHWM:\\s+([0-9]+) kB", [{capture, all_but_first, list}]) of
                {match, [N]} -> list_to_integer(N);
                nomatch -> 0
            end;
        {error, _} -> 0
    end.

%% A command that did not end is stopped by its OS pid (the emulator the port started).
kill(Pid) -> os:cmd("kill -9 " ++ integer_to_list(Pid)).
