%% @doc On the node under test: call a target operation and turn its `{error, _}' answer into an
%% exception, so that a load run's `rpc' request (which does not look at results) counts it as
%% an error. The studies call `beamscale_target_mysql:write(N)' and friends through this.
-module(beamscale_target_check).

-export([call/3]).

%% @doc `M:F(A)'; `{error, Reason}' raises `error({target_error, Reason})', other results are
%% returned as they are.
-spec call(module(), atom(), list()) -> term().
call(M, F, A) ->
    case apply(M, F, A) of
        {error, Reason} -> error({target_error, Reason});
        Result -> Result
    end.
