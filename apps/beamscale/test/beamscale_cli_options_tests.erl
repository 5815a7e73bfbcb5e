%% Every command's option declarations: no help text says a default itself (the help prints
%% the declared one), and a declared default is the value the library applying it uses.
-module(beamscale_cli_options_tests).

-include_lib("eunit/include/eunit.hrl").

%% An option's help with "default" in it repeats a default by hand: declare it instead.
no_default_written_in_help_test() ->
    ?assertEqual([], [{name(M), element(2, O), element(4, O)}
                      || M <- beamscale_cmd:commands(), O <- options(M),
                         string:find(string:lowercase(element(4, O)), "default") =/= nomatch]).

%% Each declared value matches the library's default for that option, where one applies it.
declared_defaults_are_the_libraries_test() ->
    #{rate := Rate, window_ms := Window, stacks := Stacks} = beamscale_profile:defaults(),
    Library = #{out => maps:get(out, beamscale_config:defaults()),
                msacc => maps:get(msacc, beamscale_sampler:defaults()),
                profile_rate => Rate, profile_window => Window,
                profile_stacks => atom_to_list(Stacks), dist_address => "127.0.0.1",
                alpha => maps:get(alpha, beamscale_stats_changepoint:defaults()),
                engine => "mariadb", version => "short", dir => beamscale_db:default_dir(),
                resolution => beamscale_load_intervals:text(
                                beamscale_load_intervals:default_ms())},
    Declared = [{name(M), K, V} || M <- beamscale_cmd:commands(),
                                   {K, V} <- maps:to_list(beamscale_args:defaults(options(M)))],
    ?assertEqual([], [{C, K, V, maps:get(K, Library)}
                      || {C, K, V} <- Declared, is_map_key(K, Library),
                         %% record's --out is the base name of its files, no run directory.
                         {C, K} =/= {"record", out},
                         V =/= maps:get(K, Library)]),
    %% run: a declared default of a configuration key is beamscale_config:defaults/0's.
    Config = beamscale_config:defaults(),
    ?assertEqual([], [{K, V} || {"run", K, V} <- Declared, is_map_key(K, Config),
                                V =/= maps:get(K, Config)]).

%% A default that is a fixed value is declared `{value, V}', read from the library that applies
%% it: a `{text, "..."}' literal of one word holding a digit, a dot or a slash (1s, runs/db) is a
%% value written by hand, a second copy that drifts from the library's.
no_value_written_as_text_test() ->
    Dir = filename:join(beamscale_docs_tests:root(), "apps/beamscale/src/cli"),
    {ok, Names} = file:list_dir(Dir),
    ?assertEqual([], lists:append([value_texts(filename:join(Dir, N))
                                   || N <- lists:sort(Names), filename:extension(N) =:= ".erl"])).

value_texts(File) ->
    {ok, Bin} = file:read_file(File),
    {ok, Tokens, _} = erl_scan:string(unicode:characters_to_list(Bin)),
    [{filename:basename(File), Line, T} || [{'{', _}, {atom, _, text}, {',', _}, {string, Line, T},
                                            {'}', _} | _] <- tails(Tokens),
                                           is_value(T)].

tails([]) -> [];
tails([_ | Rest] = L) -> [L | tails(Rest)].

is_value(T) ->
    not lists:member($\s, T) andalso lists:any(fun(C) -> lists:member(C, "0123456789./") end, T).

%% Every command's help prints (each declared default formats by its option's type).
usage_formats_every_default_test() ->
    [?assert(is_list(lists:flatten(beamscale_args:usage(options(M)))))
     || M <- beamscale_cmd:commands()].

%% The defaults that depend on the mode or the host are said as text, built from the values.
text_defaults_test() ->
    ?assertEqual("0.5, callers 1, squeeze per step 0.5", text(beamscale_cmd_bench, time)),
    ?assertEqual("20; callers 10, squeeze 5", text(beamscale_cmd_bench, samples)),
    ?assertEqual("3m", text(beamscale_cmd_saturate, budget)),
    ?assertEqual("10; --closed: 1", text(beamscale_cmd_saturate, start)),
    ?assertEqual("5", text(beamscale_cmd_saturate, tolerance)),
    ?assertEqual("2000; as long again unprofiled", text(beamscale_cmd_run, profile_window)).

options(M) -> maps:get(options, M:info()).

name(M) -> maps:get(name, M:info()).

text(M, Key) ->
    {_, _, _, _, {text, T}} = lists:keyfind(Key, 1, options(M)),
    T.
