%% @doc The key of a runtime environment, "OTP/ERL_ARGS/SCHEDULERS/NODES": one string in the
%% store's keys, the sampler's rows and the output file names; four columns in the CSV files.
-module(beamscale_format_env).

-export([key/1, fields/1]).
-export_type([env/0]).

%% An environment as the plan makes it (atoms and integers) or as a CSV row reads (binaries).
-type env() :: #{otp := atom() | binary(), erl_args := atom() | binary(),
                 schedulers := pos_integer() | binary(), nodes := pos_integer() | binary(),
                 atom() => term()}.

%% @doc The key of an environment.
-spec key(env()) -> binary().
key(#{otp := Otp, erl_args := Args, schedulers := S, nodes := N}) ->
    iolist_to_binary(lists:join($/, [text(Otp), text(Args), text(S), text(N)])).

%% @doc The four columns of a key: OTP and erl_args names, schedulers and nodes as integers.
-spec fields(binary()) -> [binary() | integer()].
fields(Key) ->
    [Otp, Args, S, N] = binary:split(Key, <<"/">>, [global]),
    [Otp, Args, binary_to_integer(S), binary_to_integer(N)].

text(A) when is_atom(A) -> atom_to_binary(A);
text(I) when is_integer(I) -> integer_to_binary(I);
text(B) when is_binary(B) -> B.
