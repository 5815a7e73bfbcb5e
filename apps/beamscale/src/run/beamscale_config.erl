%% @doc The run configuration: an Erlang-terms file of `{Key, Value}.' entries, with command-line
%% overrides. Defaults are filled in one place (`defaults/0'); every wrong value is an error that
%% names file, line and key. See docs/config.md for every key.
-module(beamscale_config).

-export([defaults/0, load/2, check/2, format_error/1, keys/0]).
-export_type([config/0, source/0]).

-type config() :: #{
    benchmarks := all | [atom()],
    version := beamscale_bench:version(),
    schedulers := [pos_integer()],
    nodes := [pos_integer()],
    erls := [{atom(), string()}],
    erl_args := [{atom(), string()}],
    iterations := pos_integer(),
    warmups := non_neg_integer(),
    launches := pos_integer(),
    clock := wall | cpu | instructions,
    sweep := cross | bencherl,
    timeout := pos_integer(),
    bench_path := [string()],
    code_path := [string()],
    overrides := #{atom() => map()},
    out := string(),
    sample := pos_integer() | false,
    msacc := 0..100,
    profile := beamscale_profile:opts() | false,
    hosts := [beamscale_load_scenario:ssh_host()],
    node_names := [string()],
    cookie_file := none | string(),
    name => string(),
    %% `run --seed': the seed of each launch's order of the jobs (no file key: not the
    %% experiment, and run.json keeps it apart from the configuration).
    seed => integer()}.
%% Where a value came from: a file and line, or the command line.
-type source() :: {file:filename(), non_neg_integer()} | command_line.
-type reason() :: {source(), [term()], string()}.

%% Keys a per-benchmark override may set.
-define(OVERRIDABLE, [version, schedulers, nodes, erl_args, iterations, warmups, launches,
                      timeout, node_names]).
%% Shorter intervals than this would measure the sampler more than the node.
-define(MIN_SAMPLE_MS, 100).
%% Fresh emulators per environment point: the variation between launches is sampled, which
%% one launch never shows (docs/config.md, "Launches", says how this was chosen).
-define(LAUNCHES, 3).
-define(NAME_CHARS, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-").

%% @doc The embedded default configuration: every benchmark, short, 1..cores schedulers.
-spec defaults() -> config().
defaults() ->
    #{benchmarks => all, version => short, schedulers => lists:seq(1, beamscale_os:logical_cores()),
      nodes => [1], erls => [{default, "erl"}], erl_args => [{default, ""}], iterations => 3,
      warmups => 1, launches => ?LAUNCHES, clock => wall, sweep => cross, timeout => 300,
      bench_path => [], code_path => [], hosts => [], node_names => [], cookie_file => none,
      overrides => #{},
      out => "runs", sample => 1000, msacc => maps:get(msacc, beamscale_sampler:defaults()),
      profile => false}.

%% @doc Every key a configuration file may hold.
-spec keys() -> [atom()].
keys() -> lists:sort([name | maps:keys(defaults())]).

%% @doc Read `File' (or a built-in preset, or nothing when `undefined') and apply `Overrides'
%% from the command line. A preset is read as a file named `preset NAME' (beamscale_presets).
-spec load(file:filename() | {preset, string()} | undefined, [{atom(), term()}]) ->
    {ok, config()} | {error, {?MODULE, reason()}}.
load(From, Overrides) ->
    maybe_error(
        fun() ->
            {File, Entries} = entries(From),
            _ = no_duplicates(File, Entries),
            FromFile = lists:foldl(fun(E, C) -> apply_entry(File, E, C) end, defaults(), Entries),
            Config = lists:foldl(fun({K, V}, C) -> set(command_line, [K], V, C) end, FromFile,
                                 Overrides),
            Source = fun(Key) -> source_of(File, Entries, Overrides, Key) end,
            check_benchmarks(Source(benchmarks), Config),
            Given = fun(K) -> lists:keymember(K, 1, Overrides) orelse
                                  (not is_tuple(From) andalso
                                   lists:any(fun(#{key := K1}) -> K1 =:= K end, Entries))
                    end,
            case beamscale_config_clock:check(Config, Given) of
                {ok, Counted} -> {ok, resolve_erls(Source(erls), Counted)};
                {error, Key, Message} -> fail(Source(Key), [Key], Message)
            end
        end).

%% @doc Validate and normalise one value; `{error, Path, Message}' names a nested key.
-spec check(atom(), term()) -> {ok, term()} | {error, [term()], string()}.
check(benchmarks, all) -> {ok, all};
check(benchmarks, L) -> atoms(L, "a list of benchmark names or all");
check(version, V) when V =:= short; V =:= intermediate; V =:= long -> {ok, V};
check(version, _) -> bad("short, intermediate or long");
check(schedulers, all) -> {ok, lists:seq(1, beamscale_os:logical_cores())};
check(schedulers, L) when is_list(L) ->
    %% `all' in a list is the number of logical cores: [1, all] is one scheduler and all.
    counts([case N of all -> beamscale_os:logical_cores(); _ -> N end || N <- L],
           "a list of counts, {From, To} or all");
check(schedulers, V) -> counts(V, "a list of counts, {From, To} or all");
check(nodes, V) -> counts(V, "a list of node counts or {From, To}");
check(erls, V) -> aliases(V, fun is_string/1, "{Alias, \"path/to/erl\"}");
check(erl_args, V) ->
    case aliases(V, fun is_string/1, "{Alias, \"emulator flags\"}") of
        {ok, Sets} -> check_flags(Sets);
        Error -> Error
    end;
check(iterations, N) when is_integer(N), N > 0 -> {ok, N};
check(iterations, _) -> bad("a positive integer");
check(warmups, N) when is_integer(N), N >= 0 -> {ok, N};
check(warmups, _) -> bad("a non-negative integer");
check(launches, N) when is_integer(N), N > 0 -> {ok, N};
check(launches, _) -> bad("a positive integer (fresh emulators per environment)");
check(clock, C) when C =:= wall; C =:= cpu; C =:= instructions -> {ok, C};
check(clock, _) -> bad("wall (elapsed time, as bencherl), cpu (the emulator's CPU time) or "
                       "instructions (retired, counted; docs/micro.md)");
check(sweep, S) when S =:= cross; S =:= bencherl -> {ok, S};
check(sweep, _) -> bad("cross (every combination) or bencherl (two one-dimensional sweeps)");
check(timeout, N) when is_integer(N), N > 0 -> {ok, N};
check(timeout, _) -> bad("a positive number of seconds");
check(bench_path, P) -> dirs(P);
check(code_path, S) when is_list(S), S =/= [], is_integer(hd(S)) -> check(code_path, [S]);
check(code_path, L) when is_list(L) ->
    case lists:all(fun is_string/1, L) andalso beamscale_code:expand_path(L) of
        false -> bad("a directory, a glob or a list of them");
        {ok, Dirs} -> {ok, Dirs};
        {error, {beamscale_code, Why}} -> {error, [], beamscale_code:format_error(Why)}
    end;
check(code_path, _) -> bad("a directory, a glob or a list of them");
check(out, S) -> string(S, "a directory name");
check(node_names, L) when is_list(L) ->
    Ok = fun(N) -> is_string(N) andalso N =/= "" andalso
                       lists:all(fun(C) -> lists:member(C, ?NAME_CHARS -- ".-") end, N) end,
    case lists:all(Ok, L) of
        true -> {ok, L};
        false -> bad("a list of name prefixes of letters, digits and '_' for nodes 2..N")
    end;
check(node_names, _) -> bad("a list of name prefixes for nodes 2..N");
check(cookie_file, none) -> {ok, none};
check(cookie_file, F) ->
    case is_string(F) andalso file:read_file(F) of
        {ok, Bin} when byte_size(Bin) > 0 -> {ok, F};
        {ok, _} -> {error, [], "the cookie file is empty: " ++ F};
        {error, Why} -> {error, [], F ++ ": " ++ file:format_error(Why)};
        false -> bad("a file holding the run's cookie, or none")
    end;
check(name, S) ->
    Allowed = fun(C) -> lists:member(C, ?NAME_CHARS) end,
    %% "." and ".." are made of allowed characters but name no directory of their own.
    case is_string(S) andalso S =/= "" andalso lists:all(Allowed, S)
        andalso S =/= "." andalso S =/= ".." of
        true -> {ok, S};
        false -> bad("a name of letters, digits, '_', '.' and '-' (not . or ..)")
    end;
check(overrides, V) -> overrides(V);
check(sample, false) -> {ok, false};
check(sample, Ms) when is_integer(Ms), Ms >= ?MIN_SAMPLE_MS -> {ok, Ms};
check(sample, _) -> bad("a sampling interval in milliseconds (at least 100) or false");
check(msacc, Pct) when is_integer(Pct), Pct >= 0, Pct =< 100 -> {ok, Pct};
check(msacc, _) -> bad("the share (%) of each sampling interval msacc is on, 0 to 100");
check(profile, false) -> {ok, false};
check(profile, true) -> {ok, beamscale_profile:defaults()};
check(profile, M) when is_map(M) -> profile(maps:merge(beamscale_profile:defaults(), M));
check(profile, _) -> bad("false, true or a map of rate, window_ms, stacks (docs/profiles.md)");
check(hosts, L) when is_list(L) -> hosts(L);
check(hosts, _) -> bad("a list of hosts reached by ssh for nodes 2..N (bencherl's slave nodes)");
check(Key, _) -> {error, [], "unknown key " ++ atom_to_list(Key) ++ " (known: " ++ known() ++ ")"}.

%% Hosts of the nodes after the first, as the scenario's load node hosts (ssh options, login,
%% erl); a host's count and weight of arrivals are a load's, not a run's.
hosts(L) ->
    try
        {ok, [case H of
                  {_, #{nodes := _}} -> throw({bad, [], "nodes: not for a run's hosts"});
                  {_, #{weight := _}} -> throw({bad, [], "weight: not for a run's hosts"});
                  _ -> maps:without([nodes, weight], beamscale_load_scenario_where:ssh_host(H))
              end || H <- L]}
    catch throw:{bad, Path, Msg} -> {error, Path, lists:flatten(Msg)}
    end.

%% @doc One line for a configuration error.
-spec format_error({?MODULE, reason()} | reason()) -> string().
format_error({?MODULE, Reason}) -> format_error(Reason);
format_error({command_line, [Key | Sub], Message}) ->
    Option = "--" ++ lists:map(fun($_) -> $-; (C) -> C end, atom_to_list(option(Key))),
    lists:flatten(io_lib:format("command line: ~s: ~s", [path_text([Option | Sub]), Message]));
format_error({{File, Line}, [], Message}) ->
    lists:flatten(io_lib:format("~ts:~b: ~s", [File, Line, Message]));
format_error({{File, Line}, Path, Message}) ->
    lists:flatten(io_lib:format("~ts:~b: ~s: ~s", [File, Line, path(Path), Message])).

%%% Internals

maybe_error(Fun) ->
    try Fun()
    catch throw:{config_error, Reason} -> {error, {?MODULE, Reason}}
    end.

-spec fail(source(), [term()], iodata()) -> no_return().
fail(Source, Path, Message) -> throw({config_error, {Source, Path, lists:flatten(Message)}}).

%% The name errors give the source, and its entries.
entries(undefined) -> {undefined, []};
entries({preset, Name}) ->
    case beamscale_presets:text(Name) of
        {ok, Text} ->
            Label = "preset " ++ Name,
            case beamscale_format_terms:parse(Text) of
                {ok, Entries} -> {Label, Entries};
                {error, {Line, Message}} -> fail({Label, Line}, [], Message)
            end;
        error ->
            Known = lists:join(", ", beamscale_presets:names()),
            fail(command_line, [preset], ["unknown preset ", Name, " (known: ", Known, ")"])
    end;
entries(File) ->
    case beamscale_format_terms:read(File) of
        {ok, Entries} -> {File, Entries};
        {error, {Line, Message}} -> fail({File, Line}, [], Message)
    end.

apply_entry(File, #{key := Key, value := Value} = Entry, Config) ->
    case check(Key, Value) of
        {ok, Norm} -> Config#{Key => Norm};
        {error, Sub, Message} ->
            fail({File, beamscale_format_terms:line(Entry, Sub)}, [Key | Sub], Message)
    end.

%% A key given twice is an error: the second would silently win.
no_duplicates(File, Entries) ->
    lists:foldl(
        fun(#{key := Key, line := Line}, Seen) ->
            case lists:member(Key, Seen) of
                true -> fail({File, Line}, [Key], "given twice");
                false -> [Key | Seen]
            end
        end, [], Entries).

set(Source, [Key], Value, Config) ->
    case check(Key, Value) of
        {ok, Norm} -> Config#{Key => Norm};
        {error, Sub, Message} -> fail(Source, [Key | Sub], Message)
    end.

source_of(File, Entries, Overrides, Key) ->
    Lines = [L || #{key := K, line := L} <- Entries, K =:= Key],
    case {lists:keymember(Key, 1, Overrides), Lines} of
        {true, _} -> command_line;
        {false, [L | _]} -> {File, L};
        {false, []} when File =:= undefined -> command_line;
        %% A default that fails a check: the file, at its first line (no line is 0).
        {false, []} -> {File, 1}
    end.

bad(Expected) -> {error, [], "expected " ++ Expected}.

known() -> lists:join(", ", [atom_to_list(K) || K <- keys()]).

path(Path) -> path_text(Path).

path_text(Path) ->
    lists:join(".", [case P of
                         "--" ++ _ -> P;
                         _ -> io_lib:format("~0p", [P])
                     end || P <- Path]).

profile(#{rate := R, window_ms := W, stacks := S} = M)
  when is_integer(R), R > 0, R =< 10000, is_integer(W), W >= 100, map_size(M) =:= 3,
       (S =:= dwarf orelse S =:= fp) ->
    {ok, M};
profile(_) ->
    bad("#{rate => Hz (1 to 10000), window_ms => Ms (at least 100), stacks => dwarf | fp} "
        "(docs/profiles.md)").

%% The command-line option that sets a key, where its name differs.
option(benchmarks) -> bench;
option(sample) -> 'no-sample';
option(Key) -> Key.

is_string(S) -> is_list(S) andalso io_lib:printable_unicode_list(S).

string(S, What) ->
    case is_string(S) andalso S =/= "" of
        true -> {ok, S};
        false -> bad(What)
    end.

atoms(L, What) when is_list(L), L =/= [] ->
    case lists:all(fun is_atom/1, L) of
        true -> {ok, L};
        false -> bad(What)
    end;
atoms(_, What) -> bad(What).

counts({From, To}, _What) when is_integer(From), is_integer(To), From > 0, From =< To ->
    {ok, lists:seq(From, To)};
counts(L, What) when is_list(L), L =/= [] ->
    case lists:all(fun(N) -> is_integer(N) andalso N > 0 end, L) of
        true -> {ok, lists:usort(L)};
        false -> bad(What)
    end;
counts(_, What) -> bad(What).

%% A non-empty list of {Alias, Value} with unique atom aliases.
aliases(L, IsValue, What) when is_list(L), L =/= [] ->
    Bad = [E || E <- L, not is_alias(E, IsValue)],
    Aliases = [A || {A, _} <- L -- Bad],
    case {Bad, Aliases -- lists:usort(Aliases)} of
        {[{A, _} | _], _} when is_atom(A) -> {error, [A], "expected " ++ What};
        {[_ | _], _} -> bad("a list of " ++ What);
        {[], [Dup | _]} -> {error, [Dup], "alias given twice"};
        {[], []} -> {ok, L}
    end;
aliases(_, _IsValue, What) -> bad("a non-empty list of " ++ What).

is_alias({A, V}, IsValue) -> is_atom(A) andalso IsValue(V);
is_alias(_, _) -> false.

%% Flags the environment dimensions own, or that today's OTP refuses (see docs/config.md).
check_flags(Sets) ->
    Bad = [{A, Why} || {A, Flags} <- Sets, Why <- [flag_problem(string:lexemes(Flags, " "))],
                       Why =/= ok],
    case Bad of
        [] -> {ok, Sets};
        [{A, Why} | _] -> {error, [A], Why}
    end.

flag_problem(Words) ->
    case {lists:member("+S", Words) orelse lists:any(fun(W) -> lists:prefix("+S", W) andalso
                                                              not lists:prefix("+SD", W) andalso
                                                              not lists:prefix("+SP", W)
                                                      end, Words),
          lists:member("-smp", Words), lists:member("+K", Words)} of
        {true, _, _} -> "+S is set by the schedulers dimension; remove it";
        {_, true, _} -> "-smp is gone since OTP 21; use the schedulers dimension (+S 1:1) instead";
        {_, _, true} -> "+K has no effect on today's OTP; remove it";
        _ -> ok
    end.

dirs(S) when is_list(S), S =/= [], is_integer(hd(S)) -> dirs([S]);
dirs(L) when is_list(L) ->
    case [D || D <- L, not is_string(D)] of
        [_ | _] -> bad("a directory or a list of directories");
        [] ->
            case [D || D <- L, not filelib:is_dir(D)] of
                [] -> {ok, L};
                [D | _] -> {error, [], "no such directory: " ++ D}
            end
    end;
dirs(_) -> bad("a directory or a list of directories").

overrides(L) when is_list(L) -> overrides(L, #{});
overrides(_) -> bad("a list of {Benchmark, [{Key, Value}]}").

overrides([], Acc) -> {ok, Acc};
overrides([{Bench, Settings} | Rest], Acc) when is_atom(Bench), is_list(Settings) ->
    case override_settings(Settings, #{}) of
        {ok, Map} -> overrides(Rest, Acc#{Bench => Map});
        {error, Path, Message} -> {error, [Bench | Path], Message}
    end;
overrides(_, _) -> bad("a list of {Benchmark, [{Key, Value}]}").

override_settings([], Acc) -> {ok, Acc};
override_settings([{Key, Value} | Rest], Acc) when is_atom(Key) ->
    case lists:member(Key, ?OVERRIDABLE) of
        false ->
            Known = lists:join(", ", [atom_to_list(K) || K <- ?OVERRIDABLE]),
            {error, [Key], "cannot be set per benchmark (these can: " ++ Known ++ ")"};
        true ->
            case check(Key, Value) of
                {ok, Norm} -> override_settings(Rest, Acc#{Key => Norm});
                {error, Sub, Message} -> {error, [Key | Sub], Message}
            end
    end;
override_settings(_, _) -> bad("a list of {Key, Value}").

%% Benchmarks must be built in or found on the bench path or the code path (a handler built
%% with the user's application; `all' takes only the bench path's, not every module there).
check_benchmarks(_Source, #{benchmarks := all}) -> ok;
check_benchmarks(Source, #{benchmarks := Names, bench_path := Path, code_path := Code}) ->
    Known = lists:usort(beamscale_handlers:available(Path) ++ beamscale_bench:available(Code)),
    case [N || N <- Names, not lists:member(N, Known)] of
        [] -> ok;
        [N | _] ->
            fail(Source, [benchmarks], ["unknown benchmark ", atom_to_list(N),
                                         beamscale_handlers:near(N, Known)])
    end.

%% An erl is a release's name, a path, or a command on PATH (`beamscale_config_erls').
resolve_erls(Source, #{erls := Erls} = Config) ->
    case beamscale_config_erls:resolve(Erls) of
        {ok, Resolved} -> Config#{erls := Resolved};
        {error, Path, Message} -> fail(Source, Path, Message)
    end.
