%% Hostile scenario and Tsung files (issue 15, "Hostile input"): every file of this suite's data
%% directory, run through the real command line, is refused while it is read: exit 2 within 5 s,
%% under 200 MB, at most 3 lines naming the file and a line, no internal error or crash report.
-module(beamscale_hostile_input_SUITE).

-include_lib("common_test/include/ct.hrl").
-include_lib("stdlib/include/assert.hrl").

-export([suite/0, all/0, tsung_files/0, tsung_files/1, terms_files/0, terms_files/1]).

%% The issue's bounds: a refusal within 5 s (emulator start included) and under 200 MB.
-define(MAX_MS, 5000).
-define(MAX_KB, 200 * 1024).
%% How often the command's peak memory (VmHWM) is read while it runs.
-define(POLL_MS, 20).
-define(MAX_LINES, 3).

%% About 80 files of about 1 s each, run one after the other.
suite() -> [{timetrap, {minutes, 6}}].

all() -> [tsung_files, terms_files].

tsung_files() -> [{doc, "Every hostile .xml file is refused: exit 2, in time, in memory, named."}].
tsung_files(Config) -> run_all(Config, ".xml").

terms_files() -> [{doc, "Every hostile .scenario file is refused: exit 2, in time, in memory."}].
terms_files(Config) -> run_all(Config, ".scenario").

run_all(Config, Ext) ->
    Dir = ?config(data_dir, Config),
    Files = lists:sort(filelib:wildcard("*" ++ Ext, Dir)),
    ?assert(length(Files) >= 20),
    Failed = [{F, Why} || F <- Files,
                          Why <- [check(filename:join(Dir, F), ?config(priv_dir, Config))],
                          Why =/= ok],
    [ct:pal("~ts: ~tp", [F, W]) || {F, W} <- Failed],
    ?assertEqual([], [F || {F, _} <- Failed]).

%% One file through `beamscale load': `ok' or what is wrong.
check(File, Out) ->
    T0 = erlang:monotonic_time(millisecond),
    Port = beamscale_test_cli:open(["load", File, "--out", Out, "--name", "hostile"]),
    {os_pid, Pid} = erlang:port_info(Port, os_pid),
    case wait(Port, Pid, T0 + ?MAX_MS, <<>>, 0) of
        {timeout, KB, Output} ->
            kill(Pid),
            {did_not_end_within_ms, ?MAX_MS, KB, Output};
        {Code, KB, Output} ->
            Ms = erlang:monotonic_time(millisecond) - T0,
            verdict(File, Code, Ms, KB, unicode:characters_to_list(Output))
    end.

verdict(File, Code, Ms, KB, Output) ->
    Lines = [L || L <- string:split(string:trim(Output), "\n", all), L =/= ""],
    Named = [L || L <- Lines, re:run(L, [File, ":[0-9]+: "], [unicode]) =/= nomatch],
    Bad = [W || W <- ["internal error", "crash", "Stacktrace", "=ERROR REPORT", "** ",
                      "nothing answers", "reader failed"],
                string:find(Output, W) =/= nomatch],
    if Code =/= 2 -> {exit_code, Code, Output};
       KB > ?MAX_KB -> {peak_kb, KB, Output};
       Ms > ?MAX_MS -> {took_ms, Ms};
       length(Lines) > ?MAX_LINES -> {lines, length(Lines), Output};
       Named =:= [] -> {no_file_and_line, Output};
       Bad =/= [] -> {says, Bad, Output};
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
