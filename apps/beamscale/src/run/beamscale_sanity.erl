%% @doc The sanity checker: what a benchmark printed for one argument set must be the same in every
%% environment (differences in white space aside, as bencherl's `diff' ignored them). A benchmark
%% that printed nothing is `unchecked', not passed.
-module(beamscale_sanity).

-export([check/1, verdict/1, combine/1, format/1, to_text/1]).
-export_type([verdict/0]).

-type verdict() :: passed | unchecked | {failed, string()}.

%% @doc Verdict per benchmark of a run directory: its outputs grouped by argument set.
-spec check(file:filename()) -> [{binary(), verdict()}].
check(Dir) ->
    Rows = beamscale_store:measurements(Dir),
    Groups = lists:foldl(
               fun(#{benchmark := B, args := A} = R, Acc) ->
                       Env = beamscale_format_env:key(R),
                       maps:update_with({B, A}, fun(Es) -> add(Env, Es) end, [Env], Acc)
               end, #{}, Rows),
    PerArgs = [{B, verdict([{Env, read_output(Dir, B, A, Env)} || Env <- lists:reverse(Envs)])}
               || {{B, A}, Envs} <- maps:to_list(Groups)],
    Benches = lists:usort([B || {B, _} <- PerArgs]),
    [{B, combine([V || {B1, V} <- PerArgs, B1 =:= B])} || B <- Benches].

%% @doc Compare the outputs of one argument set across environments.
-spec verdict([{Env :: binary(), Output :: binary()}]) -> verdict().
verdict(Outputs) ->
    Normal = [{Env, lines(Out)} || {Env, Out} <- Outputs],
    case [N || {_, Lines} = N <- Normal, Lines =/= []] of
        [] -> unchecked;
        _ ->
            [{Env0, Ref} | Rest] = Normal,
            case [{Env, Lines} || {Env, Lines} <- Rest, Lines =/= Ref] of
                [] -> passed;
                [{Env, Lines} | _] -> {failed, first_difference(Env0, Ref, Env, Lines, 1)}
            end
    end.

%% @doc One verdict from several: a failure wins, then a pass; all unchecked stays unchecked.
-spec combine([verdict()]) -> verdict().
combine(Verdicts) ->
    case [F || {failed, _} = F <- Verdicts] of
        [F | _] -> F;
        [] ->
            case lists:member(passed, Verdicts) of
                true -> passed;
                false -> unchecked
            end
    end.

%% @doc A verdict as one line of text.
-spec format(verdict()) -> string().
format(passed) -> "passed";
format(unchecked) -> "unchecked (printed nothing)";
format({failed, Why}) -> "failed: " ++ Why.

%% @doc A verdict's word, for tables.
-spec to_text(verdict()) -> binary().
to_text(passed) -> <<"passed">>;
to_text(unchecked) -> <<"unchecked">>;
to_text({failed, _}) -> <<"failed">>.

%%% Internals

add(Env, Envs) ->
    case lists:member(Env, Envs) of
        true -> Envs;
        false -> [Env | Envs]
    end.

read_output(Dir, B, A, Env) ->
    case file:read_file(filename:join(Dir, beamscale_store:output_file(B, A, Env))) of
        {ok, Bin} -> Bin;
        {error, _} -> <<>>
    end.

%% Lines with runs of white space made one space and blank lines dropped.
lines(Bin) ->
    [L || Line <- binary:split(Bin, [<<"\n">>, <<"\r\n">>], [global]),
          L <- [squash(Line)], L =/= <<>>].

squash(Line) ->
    iolist_to_binary(lists:join(<<" ">>, string:lexemes(Line, " \t\r"))).

first_difference(EnvA, [A | As], EnvB, [A | Bs], N) -> first_difference(EnvA, As, EnvB, Bs, N + 1);
first_difference(EnvA, As, EnvB, Bs, N) ->
    lists:flatten(io_lib:format("line ~b: ~ts printed ~ts, ~ts printed ~ts",
                                [N, EnvA, show(As), EnvB, show(Bs)])).

show([]) -> "nothing more";
show([L | _]) -> io_lib:format("~tp", [L]).
